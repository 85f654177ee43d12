#!/usr/bin/env python3
"""Checks deploy/grafana/tandem-dashboard.json against a live replica's /metrics.

    grafana_dashboard_check.py DASHBOARD METRICS_FILE RULES_OUT

Fails (exit 1) when the JSON does not parse, a panel has no query, a query names a metric the
replica does not export (a renamed metric breaks the dashboard: this catches it), a label a query
groups, matches or shows by is on none of that family's samples, or a metric that matters (peek
latency, segment bytes, hold gap, stalls, refusals, peek ring records) is on no panel. It writes
every query as a recording rule into RULES_OUT (Grafana's $variables replaced) for
`promtool check rules` to parse. Negative cases (a renamed metric, a wrong label, a panel with no
query) must each be caught, so the check is shown able to fail.
"""
import copy
import json
import re
import sys

MUST_SHOW = [
    "tandem_peek_latency_seconds", "tandem_segment_bytes", "tandem_index_hold_gap_max",
    "tandem_runtime_stalled", "tandem_index_parts_stalled", "tandem_refused_commands_total",
    "tandem_peek_ring_records_total", "tandem_ready", "tandem_runtime_up",
]
LABELS_ANY_METRIC_HAS = {"instance", "job", "le"}  # added by Prometheus, or the histogram's own


def parse_metrics(text):
    """→ ({family: type}, {sample name: set of label names})"""
    types, labels = {}, {}
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)", line)
        if m:
            types[m.group(1)] = m.group(2)
            continue
        if not line or line.startswith("#"):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?", line)
        names = set(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(3) or ""))
        labels.setdefault(m.group(1), set()).update(names)
    return types, labels


def family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)] if name.endswith(suffix) else None
        if base and types.get(base) in ("histogram", "summary"):
            return base
    return None


def panels_of(dash):
    for p in dash.get("panels", []):
        yield p
        yield from p.get("panels", [])  # collapsed rows keep theirs inside


def check(dash, types, samples):
    errors = []
    shown = set()
    ids = [p.get("id") for p in panels_of(dash)]
    if len(ids) != len(set(ids)):
        errors.append("panel ids are not unique")
    for p in panels_of(dash):
        if p.get("type") == "row":
            continue
        title = p.get("title", "?")
        targets = [t for t in p.get("targets", []) if t.get("expr", "").strip()]
        if not targets:
            errors.append(f"panel '{title}' has no query")
        for t in targets:
            expr = t["expr"]
            # Metric names: tandem_* identifiers not used as a label (label=…) .
            names = set(re.findall(r"\b(tandem_[a-zA-Z0-9_]+)\b(?!\s*(?:=|!=|=~|!~))", expr))
            if not names:
                errors.append(f"panel '{title}': query names no tandem metric: {expr}")
            families = set()
            for n in sorted(names):
                fam = family_of(n, types)
                if fam is None:
                    errors.append(f"panel '{title}': {n} is not exported by the replica")
                else:
                    families.add(fam)
                    shown.add(fam)
            # Labels the query matches, groups or ignores by, and those its legend shows.
            used = set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"", expr))
            for group in re.findall(r"\b(?:by|without|ignoring|on)\s*\(([^)]*)\)", expr):
                used.update(x.strip() for x in group.split(",") if x.strip())
            used.update(re.findall(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}", t.get("legendFormat", "")))
            used -= LABELS_ANY_METRIC_HAS
            have = set()
            sampled = False
            for n in names:
                fam = family_of(n, types)
                for sample, labels in samples.items():
                    if fam and family_of(sample, types) == fam:
                        sampled = True
                        have |= labels
            if sampled:
                for label in sorted(used - have):
                    errors.append(f"panel '{title}': label '{label}' is on no sample of "
                                  f"{', '.join(sorted(families))}")
    for m in MUST_SHOW:
        if m not in shown:
            errors.append(f"no panel shows {m}")
    return errors


def as_rules(dash):
    rules = []
    for p in panels_of(dash):
        for t in p.get("targets", []):
            expr = t.get("expr", "")
            if not expr:
                continue
            expr = (expr.replace("$__rate_interval", "5m").replace("$__range", "1h")
                    .replace("$__interval", "1m").replace("$instance", ".*"))
            rules.append({"record": f"dashboard:panel{p.get('id')}:{t.get('refId', 'A')}",
                          "expr": expr})
    return {"groups": [{"name": "tandem-dashboard", "rules": rules}]}


def main():
    dash_path, metrics_path, rules_out = sys.argv[1:4]
    try:
        with open(dash_path, encoding="utf-8") as f:
            dash = json.load(f)
    except ValueError as e:
        print(f"FAIL {dash_path} does not parse: {e}")
        return 1
    with open(metrics_path, encoding="utf-8") as f:
        types, samples = parse_metrics(f.read())
    passed = failed = 0

    errors = check(dash, types, samples)
    queries = sum(len(p.get("targets", [])) for p in panels_of(dash))
    if errors:
        failed += 1
        print("FAIL the dashboard:")
        for e in errors:
            print("     " + e)
    else:
        passed += 1
        print(f"ok   {queries} queries on {len(list(panels_of(dash)))} panels name only exported "
              f"metrics and labels ({len(types)} families exported)")

    def first_target(d):
        return next(t for p in panels_of(d) for t in p.get("targets", []) if "tandem_peek_latency" in t.get("expr", ""))

    negatives = []
    d = copy.deepcopy(dash)
    t = first_target(d)
    t["expr"] = t["expr"].replace("tandem_peek_latency_seconds", "tandem_peek_latency_secs")
    negatives.append(("a renamed metric", d))
    d = copy.deepcopy(dash)
    t = next(t for p in panels_of(d) for t in p.get("targets", []) if "tandem_segment_bytes" in t.get("expr", ""))
    t["expr"] = t["expr"].replace('kind="used"', 'sort="used"')
    negatives.append(("a label the family does not have", d))
    d = copy.deepcopy(dash)
    next(p for p in panels_of(d) if p.get("type") != "row")["targets"] = []
    negatives.append(("a panel without a query", d))
    for name, d in negatives:
        errs = check(d, types, samples)
        if errs:
            passed += 1
            print(f"ok   negative case caught ({name}): {errs[0]}")
        else:
            failed += 1
            print(f"FAIL negative case ({name}) was accepted: the check cannot fail")

    with open(rules_out, "w", encoding="utf-8") as f:
        json.dump(as_rules(dash), f, indent=1)  # JSON is YAML: promtool reads it
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
