import { specOperations, type SpecOperation } from './openapi.js';

interface CompiledRoute {
  route: string;
  segments: string[];
  /** Literal segments weigh more, so `/functions/deploy` wins over `/functions/{function_slug}`. */
  specificity: number;
  methods: Map<string, SpecOperation>;
}

export type RouteMatch =
  | { kind: 'operation'; operation: SpecOperation; params: Record<string, string> }
  | { kind: 'method-not-allowed'; route: string; allowed: string[] }
  | { kind: 'not-found' };

/** Matches request paths against the route templates of the spec. */
export class Router {
  readonly #routes: CompiledRoute[] = [];

  constructor(operations: SpecOperation[] = specOperations()) {
    const byRoute = new Map<string, CompiledRoute>();
    for (const operation of operations) {
      let compiled = byRoute.get(operation.route);
      if (!compiled) {
        const segments = operation.route.split('/').filter(Boolean);
        const specificity = segments.reduce((sum, segment, index) => sum + (segment.startsWith('{') ? 0 : 2 ** (32 - index)), 0);
        compiled = { route: operation.route, segments, specificity, methods: new Map() };
        byRoute.set(operation.route, compiled);
      }
      compiled.methods.set(operation.method, operation);
    }
    this.#routes = [...byRoute.values()].sort((a, b) => b.specificity - a.specificity);
  }

  get operations(): SpecOperation[] {
    return this.#routes.flatMap((route) => [...route.methods.values()]);
  }

  match(method: string, pathname: string): RouteMatch {
    let parts: string[];
    try {
      parts = pathname.split('/').filter(Boolean).map((part) => decodeURIComponent(part));
    } catch {
      return { kind: 'not-found' };
    }
    const candidates: Array<{ route: CompiledRoute; params: Record<string, string> }> = [];
    for (const route of this.#routes) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const segment = route.segments[i]!;
        if (segment.startsWith('{')) params[segment.slice(1, -1)] = parts[i]!;
        else ok = segment === parts[i];
      }
      if (ok) candidates.push({ route, params });
    }
    for (const candidate of candidates) {
      const operation = candidate.route.methods.get(method);
      if (operation) return { kind: 'operation', operation, params: candidate.params };
    }
    if (candidates.length > 0) {
      const allowed = [...new Set(candidates.flatMap((c) => [...c.route.methods.keys()]))].sort();
      return { kind: 'method-not-allowed', route: candidates[0]!.route.route, allowed };
    }
    return { kind: 'not-found' };
  }
}
