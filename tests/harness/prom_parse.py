"""Parses Prometheus text (stdin) with prometheus-client's own parser and prints it as JSON:
{"families": {name: type}, "samples": [{"name", "labels", "value"}]}. Fails (exit 1, message on
stderr) if the text does not parse. Used by tests/e2e/admin/metrics.rs."""
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

text = sys.stdin.read()
families = {}
samples = []
try:
    for family in text_string_to_metric_families(text):
        families[family.name] = family.type
        for s in family.samples:
            value = s.value
            if isinstance(value, float) and math.isinf(value):
                value = "+Inf" if value > 0 else "-Inf"
            samples.append({"name": s.name, "labels": s.labels, "value": value})
except Exception as e:  # the parser's own error, whatever its type
    print(f"unparsable: {e!r}", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"families": families, "samples": samples}))
