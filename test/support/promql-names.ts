// The metric names a PromQL expression selects, by a small lexer (enough for dashboards): quoted
// strings, label matchers, ranges and grouping clauses are dropped, function calls, keywords and
// numbers skipped; what is left are metric names. Histogram series name their family.
const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
]);

export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/gu, '""')
    .replace(/\{[^}]*\}/gu, " ")
    .replace(/\[[^\]]*\]/gu, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gu, " ");
  const names = new Set<string>();
  for (const m of bare.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/gu)) {
    const [, word, call] = m;
    if (!word || call || KEYWORDS.has(word) || word.startsWith("$")) continue;
    names.add(word);
  }
  return [...names];
}

/** The family a series name belongs to: a histogram's _bucket, _sum and _count name it. */
export function familyOf(name: string): string {
  return name.replace(/_(bucket|sum|count)$/u, "");
}

interface DashboardPanel {
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

/** Every PromQL expression of a Grafana dashboard: panel targets and query variables. */
export function dashboardQueries(dashboard: {
  panels?: DashboardPanel[];
  templating?: { list?: { type?: string; definition?: string }[] };
}): string[] {
  const exprs: string[] = [];
  const visit = (panels: DashboardPanel[] = []): void => {
    for (const p of panels) {
      for (const t of p.targets ?? []) if (t.expr) exprs.push(t.expr);
      visit(p.panels);
    }
  };
  visit(dashboard.panels);
  for (const v of dashboard.templating?.list ?? []) {
    // label_values(metric, label): the metric is its first argument.
    const match = /^label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)/u.exec(v.definition ?? "");
    if (v.type === "query" && match?.[1]) exprs.push(match[1]);
  }
  return exprs;
}
