# syntax=docker/dockerfile:1
#
# The reconciler image. Build:   docker build -t reconciler .
# Run once:  docker run --rm -e MANAGEMENT_API_TOKEN -v "$PWD/manifests:/manifests:ro" \
#              --read-only --tmpfs /tmp -v reconciler-state:/var/lib/reconciler reconciler /manifests --dry-run
# Try it offline:  docker run --rm --read-only --tmpfs /tmp reconciler examples --sandbox --dry-run
#
# The image holds the package as `npm pack` makes it (what a manifests repository installs:
# package.json's `files`), with the production dependencies of package-lock.json.
#
# test/deploy/dockerfile.test.ts performs these steps without a Docker engine: keep every RUN
# step to the commands that test knows (npm, tar in the working directory, apt-get for tini,
# groupadd/useradd/install -d).

# Node 24: the major the project installs for its tests (the `node` devDependency).
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: all dependencies, compile TypeScript to dist/ -----------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the `prepare` script compiles, but the sources are not copied yet; and the
# `node` devDependency would fetch a second Node binary the image already has.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY schemas ./schemas
RUN npm run build
# The published package, unpacked into package/.
RUN npm pack --ignore-scripts \
 && tar -xzf fleet-reconciler-*.tgz

# ---- deps: the package and its production dependencies --------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=build /app/package/ ./
# The lockfile pins the dependencies to the versions the tests ran with (a package never
# carries its lockfile); npm ci refuses it if it does not match the package's package.json.
COPY package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---- runtime --------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ARG NODE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="reconciler" \
      org.opencontainers.image.description="GitOps reconciler for a cloud database platform's Management API, with an emulator of the API" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

# tini as PID 1: the kernel gives PID 1 no default signal actions, so a SIGTERM that arrives
# before the reconciler has installed its handlers (while modules load) or after a command
# has removed them would be ignored until the kubelet's SIGKILL; tini forwards every signal
# to node and reaps any orphaned child process.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# A numeric, unprivileged user (Kubernetes' runAsNonRoot can verify a numeric USER), and the
# state directory it owns (a new volume mounted there starts with this owner).
RUN groupadd --gid 10001 reconciler \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin reconciler \
 && install -d -o 10001 -g 10001 -m 0700 /var/lib/reconciler

WORKDIR /app
ENV NODE_ENV=production \
    RECONCILE_STATE_DIR=/var/lib/reconciler \
    RECONCILE_METRICS_ADDR=0.0.0.0:9464 \
    RECONCILE_BUILD_REVISION=${REVISION} \
    TMPDIR=/tmp
# Owned by root and not writable by the user: the image runs with a read-only root filesystem.
COPY --from=deps /app/package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/dist ./dist
# Validation and the emulator read the JSON Schemas and the API description at run time.
COPY --from=deps /app/schemas ./schemas
# The examples, so `docker run IMAGE examples --sandbox` works without a checkout.
COPY examples ./examples

# The only writable places: the state directory and /tmp (mount both; with `--read-only`).
VOLUME ["/var/lib/reconciler", "/tmp"]
USER 10001:10001
EXPOSE 9464
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/cli/bin.js"]
CMD ["--help"]
