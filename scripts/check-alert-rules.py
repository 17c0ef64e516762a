"""Structural check of a Prometheus rules file, for machines without promtool.

Every rule of every group is an alerting rule with `alert`, `expr`, `for`, `labels.severity`
(warning or critical) and `annotations.summary` and `annotations.description`; alert names are
unique; and every `rcs_` metric an expression names is one the service exports (a quoted name in
one of the metrics sources, src/telemetry/*.ts), so a renamed metric cannot silently turn an alert into
one that never fires.

Usage: python3 scripts/check-alert-rules.py RULES_FILE METRICS_SOURCE...
"""
import re
import sys

import yaml

SEVERITIES = {"warning", "critical"}
DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")


def check(rules_path, metrics_paths):
    exported = set()
    for metrics_path in metrics_paths:
        with open(metrics_path, encoding="utf-8") as f:
            exported |= set(re.findall(r"'(rcs_[a-z_]+)'", f.read()))
    with open(rules_path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    problems = []
    groups = doc.get("groups") if isinstance(doc, dict) else None
    if not isinstance(groups, list) or not groups:
        return [f"{rules_path}: no groups"]
    names = set()
    for group in groups:
        gname = group.get("name") if isinstance(group, dict) else None
        rules = group.get("rules") if isinstance(group, dict) else None
        if not gname or not isinstance(rules, list) or not rules:
            problems.append(f"group {gname!r}: needs a name and rules")
            continue
        for i, rule in enumerate(rules):
            where = f"group {gname}, rule {i + 1}"
            if not isinstance(rule, dict):
                problems.append(f"{where}: not a mapping")
                continue
            alert = rule.get("alert")
            if not isinstance(alert, str) or not alert:
                problems.append(f"{where}: no alert name")
            else:
                where = f"{where} ({alert})"
                if alert in names:
                    problems.append(f"{where}: alert name used twice")
                names.add(alert)
            expr = rule.get("expr")
            if not isinstance(expr, str) or not expr.strip():
                problems.append(f"{where}: no expr")
            else:
                for metric in sorted(set(re.findall(r"\brcs_[a-z_]+", expr))):
                    base = re.sub(r"_(bucket|sum|count)$", "", metric)
                    if metric not in exported and base not in exported:
                        problems.append(f"{where}: {metric} is not exported (not named in {', '.join(metrics_paths)})")
            if not isinstance(rule.get("for"), str) or not DURATION.match(rule["for"]):
                problems.append(f"{where}: `for` must be a duration such as 5m")
            labels = rule.get("labels")
            if not isinstance(labels, dict) or labels.get("severity") not in SEVERITIES:
                problems.append(f"{where}: labels.severity must be one of {sorted(SEVERITIES)}")
            annotations = rule.get("annotations")
            for key in ("summary", "description"):
                if not isinstance(annotations, dict) or not str(annotations.get(key, "")).strip():
                    problems.append(f"{where}: annotations.{key} missing")
    return problems


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    found = check(sys.argv[1], sys.argv[2:])
    for problem in found:
        print(f"{sys.argv[1]}: {problem}", file=sys.stderr)
    sys.exit(1 if found else 0)
