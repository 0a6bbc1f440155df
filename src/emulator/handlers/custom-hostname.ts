import { badRequest } from '../errors.js';
import { PLATFORM_DOMAIN } from '../defaults.js';
import { newUuid, randomHex } from '../random.js';
import type { CustomHostnameRecord, ProjectRecord } from '../state.js';
import { created, ok, projectFor, type Handler } from './context.js';

const SSL_STATUS: Record<CustomHostnameRecord['status'], string> = {
  '1_not_started': 'initializing',
  '2_initiated': 'pending_validation',
  '3_challenge_verified': 'pending_deployment',
  '4_origin_setup_completed': 'active',
  '5_services_reconfigured': 'active',
};

function hostnameResponse(project: ProjectRecord, now: number): Record<string, unknown> {
  const ch = project.customHostname;
  const pending = ch.status === '2_initiated';
  return {
    status: ch.status,
    custom_hostname: ch.hostname,
    data: {
      success: true,
      errors: [],
      messages: [],
      result: {
        id: ch.id,
        hostname: ch.hostname,
        ssl: {
          status: SSL_STATUS[ch.status],
          validation_records: ch.hostname ? [{ txt_name: ch.txtName, txt_value: ch.txtValue }] : [],
          ...(pending && now < ch.verifiableAt ? { validation_errors: [{ message: 'TXT record not found yet' }] } : {}),
        },
        ownership_verification: { type: 'txt', name: ch.hostname ? `_platform-hostname.${ch.hostname}` : '', value: ch.ownershipValue },
        custom_origin_server: `${project.ref}.${PLATFORM_DOMAIN}`,
        ...(pending && now < ch.verifiableAt ? { verification_errors: [`custom hostname does not CNAME to ${project.ref}.${PLATFORM_DOMAIN}`] } : {}),
        status: ch.status === '1_not_started' ? 'pending' : ch.status === '2_initiated' ? 'pending' : 'active',
      },
    },
  };
}

const HOSTNAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export const getHostname: Handler = (context) => {
  const project = projectFor(context, { service: 'db' });
  return ok(hostnameResponse(project, context.now));
};

export const initializeHostname: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const hostname = (context.body as { custom_hostname: string }).custom_hostname.trim().toLowerCase();
  if (!HOSTNAME.test(hostname)) throw badRequest(`\`custom_hostname\` is not a valid hostname: ${hostname}`);
  if (hostname === PLATFORM_DOMAIN || hostname.endsWith(`.${PLATFORM_DOMAIN}`)) throw badRequest(`\`custom_hostname\` cannot be under ${PLATFORM_DOMAIN}`);
  for (const other of context.state.projects.values()) {
    if (other !== project && other.customHostname.hostname === hostname && other.customHostname.status !== '1_not_started') {
      throw badRequest(`The hostname ${hostname} is already used by another project`);
    }
  }
  project.customHostname = {
    status: '2_initiated',
    hostname,
    id: newUuid(),
    txtName: `_acme-challenge.${hostname}`,
    txtValue: randomHex(16),
    ownershipValue: randomHex(16),
    verifiableAt: context.now + context.durations.customHostnameVerification,
    generation: project.customHostname.generation + 1,
  };
  return created(hostnameResponse(project, context.now));
};

export const reverifyHostname: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const ch = project.customHostname;
  if (ch.status === '1_not_started') throw badRequest('No custom hostname has been initialized for this project; call initialize first');
  if (ch.status === '2_initiated' && context.now >= ch.verifiableAt) {
    ch.status = '3_challenge_verified';
    const generation = ch.generation;
    context.state.schedule(context.now + context.durations.customHostnameOriginSetup, () => {
      if (project.customHostname === ch && ch.generation === generation && ch.status === '3_challenge_verified') ch.status = '4_origin_setup_completed';
    });
  }
  return created(hostnameResponse(project, context.now));
};

export const activateHostname: Handler = (context) => {
  const project = projectFor(context, { write: true, service: 'db' });
  const ch = project.customHostname;
  if (ch.status !== '4_origin_setup_completed') {
    throw badRequest(`The custom hostname is ${ch.status}: it can be activated only once its status is 4_origin_setup_completed`);
  }
  if (project.vanity.subdomain) throw badRequest('A vanity subdomain is active on this project; deactivate it before activating a custom hostname');
  ch.status = '5_services_reconfigured';
  return created(hostnameResponse(project, context.now));
};
