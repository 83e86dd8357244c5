# SPDX-License-Identifier: MIT
# Checks on a JSON document through a real parser (python3's json), so that
# neither key order nor spacing decides a verdict: sourced, never run.
# Sources common.sh (check, ok, fail).
#   json_check DESC FILE EXPR
#                        a check (counted as check counts it) that the
#                        Python expression EXPR is true, with j bound to
#                        the document parsed from FILE: e.g.
#                        json_check "300 disks seen" "$f" 'j["seen"] == 300'.
#                        It fails, saying why, when FILE cannot be read or
#                        is not one JSON document, when EXPR names a key or
#                        index the document lacks, or when EXPR is not True.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

json_check() {
	local desc=$1 file=$2 expr=$3 why
	requires python3
	if why=$(python3 - "$file" "$expr" 2>&1 <<'PY'
import json, sys
path, expr = sys.argv[1], sys.argv[2]
try:
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
except OSError as e:
    sys.exit("cannot read %s: %s" % (path, e.strerror))
except ValueError as e:
    sys.exit("%s is not a JSON document: %s" % (path, e))
try:
    got = eval(expr, {"__builtins__": {"len": len, "all": all, "any": any}},
               {"j": j})
except (KeyError, IndexError) as e:
    sys.exit("no %s in the document" % e)
except TypeError as e:
    sys.exit("the document has another shape: %s" % e)
if got is not True:
    sys.exit("false" if got is False else "not True but %r" % (got,))
PY
	); then
		ok "$desc"
	else
		fail "$desc: $expr: $why"
	fi
}
