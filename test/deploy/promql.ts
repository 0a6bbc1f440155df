// Just enough PromQL reading to list the metric names and label names an expression uses,
// so the dashboard and the alert rules can be checked against the exported metrics.

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'Inf', 'NaN', 'inf', 'nan']);

export interface PromqlUse {
  metrics: Set<string>;
  /** Label names in selectors and in by/without/on/ignoring lists. */
  labels: Set<string>;
  /** metric name -> label names its own selector matches on. */
  selectorLabels: Map<string, Set<string>>;
}

/** Replaces Grafana's variables with values PromQL accepts. */
export function substituteGrafanaVariables(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__interval', '1m')
    .replaceAll('$__range', '1h')
    // The shard variable's All value (`allValue` in the dashboard): an install without shards
    // has no shard label, which only `.*` matches.
    .replace(/\$\{?shard\}?/g, '.*')
    .replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, '.+');
}

const TOKEN = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|\{[^}]*\}|\[[^\]]*\]|[A-Za-z_:][A-Za-z0-9_:]*|[0-9][0-9a-zA-Z.]*|\S/g;
const MATCHER = /([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)/g;

export function promqlUse(expression: string): PromqlUse {
  const expr = substituteGrafanaVariables(expression);
  const tokens = expr.match(TOKEN) ?? [];
  const use: PromqlUse = { metrics: new Set(), labels: new Set(), selectorLabels: new Map() };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!/^[A-Za-z_:]/.test(token)) {
      // A bare selector `{__name__="x"}` is not used here; label matchers of a bare brace are
      // still labels.
      if (token.startsWith('{')) for (const m of token.matchAll(MATCHER)) use.labels.add(m[1]!);
      continue;
    }
    const next = tokens[i + 1];
    if (GROUPING.has(token)) {
      if (next === '(') {
        let j = i + 2;
        for (; j < tokens.length && tokens[j] !== ')'; j++) {
          if (/^[A-Za-z_]/.test(tokens[j]!)) use.labels.add(tokens[j]!);
        }
        i = j;
      }
      continue;
    }
    if (KEYWORDS.has(token)) continue;
    if (next === '(' || (AGGREGATIONS.has(token) && next !== undefined && GROUPING.has(next))) continue; // function or aggregation
    use.metrics.add(token);
    const matchers = new Set<string>();
    if (next?.startsWith('{')) {
      for (const m of next.matchAll(MATCHER)) {
        matchers.add(m[1]!);
        use.labels.add(m[1]!);
      }
      i++;
    }
    const known = use.selectorLabels.get(token) ?? new Set<string>();
    for (const label of matchers) known.add(label);
    use.selectorLabels.set(token, known);
  }
  return use;
}

/** Every `expr` of a Grafana dashboard (panels, nested rows, and query variables). */
export function dashboardExpressions(dashboard: unknown): { where: string; expr: string }[] {
  const found: { where: string; expr: string }[] = [];
  const visitPanels = (panels: unknown[]) => {
    for (const panel of panels as { title?: string; targets?: { expr?: string; refId?: string }[]; panels?: unknown[] }[]) {
      for (const target of panel.targets ?? []) {
        if (target.expr) found.push({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr });
      }
      if (panel.panels) visitPanels(panel.panels);
    }
  };
  const d = dashboard as { panels?: unknown[]; templating?: { list?: { name: string; query?: unknown }[] } };
  visitPanels(d.panels ?? []);
  for (const variable of d.templating?.list ?? []) {
    const query = typeof variable.query === 'string' ? variable.query : (variable.query as { query?: string } | undefined)?.query;
    const inner = query ? /^label_values\((.+),\s*[A-Za-z_]+\)$/.exec(query) : null;
    if (inner) found.push({ where: `variable ${variable.name}`, expr: inner[1]! });
  }
  return found;
}
