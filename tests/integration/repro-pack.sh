#!/bin/bash
# SPDX-License-Identifier: MIT
# The reproduction pack's runner (testhost/repro/run) with no VM: every
# committed reproducer's header passes its checks; a header without a
# field, with an expected verdict that is not one of the three, or with an
# expect line for a release the pack does not know, is refused before any
# boot with exit status 2 and FILE:LINE; an unknown --release is refused;
# a reproducer whose header expects NOT RUN on both releases runs without
# booting and leaves a record a release; the table (markdown and JSON)
# is made of the records, and marks a verdict that is not the expected
# one; the README's table is what the runner makes of the committed
# records (testhost/repro/results).
. "$(dirname "$0")/../lib/common.sh"
top=$SDSWARM_TOP
run=$top/testhost/repro/run
T=$(tmpdir)
export SDSWARM_VM_DIR=$T/vm # nothing of a run lands in the checkout's caches

out=$("$run" --check all 2>&1)
expect_eq "repro --check all: exit status ($out)" 0 "$?"
n=$(find "$top/testhost/repro" -maxdepth 1 -name '*.sh' | wc -l)
check "repro --check all: $n headers" grep -q "^repro: $n headers checked" <<<"$out"

mkdir -p "$T/pack"
good() { # NAME [BOOKWORM-EXPECT] [TRIXIE-EXPECT]
	cat >"$T/pack/$1.sh" <<EOF
#!/bin/sh
# repro-exec: --frontend scsi_debug --disks 1
# software:  the test's own
# threshold: none
# upstream:  none
# assertion: none
# expect:    bookworm ${2:-NOT RUN: not on this release}
# expect:    trixie ${3:-NOT RUN: nor on this one}
exit 0
EOF
}
refused() { # DESC PATTERN ARGS...
	local desc=$1 pat=$2 o rc
	shift 2
	o=$("$run" --pack "$T/pack" "$@" 2>&1)
	rc=$?
	expect_eq "$desc: exit status" 2 "$rc"
	check "$desc: says '$pat'" grep -qF -- "$pat" <<<"$o"
	check "$desc: boots nothing" eval '! grep -q "sdswarm-testhost exec" <<<"$o"'
	sed 's/^/  | /' <<<"$o"
}

good nofield
sed -i '/^# threshold:/d' "$T/pack/nofield.sh"
refused "a header without threshold" "nofield.sh:7: the header (lines 1-7) has no '# threshold:' field" --check nofield
good badverdict "MAYBE: who knows"
refused "an expected verdict MAYBE" "badverdict.sh:7: expect: bookworm 'MAYBE': the verdict is REPRODUCED, NOT REPRODUCED or NOT RUN" --release both badverdict
good badrel
sed -i 's/^# expect:    trixie /# expect:    sid /' "$T/pack/badrel.sh"
refused "an expect line for sid" "badrel.sh:8: expect: 'sid' is not a release of the pack" badrel
refused "  ... and no trixie line" "badrel.sh:8: the header (lines 1-8) has no '# expect: trixie VERDICT: NOTE' line" badrel
good nonote "REPRODUCED:"
refused "an expect line without a note" "nonote.sh:7: expect: bookworm REPRODUCED: no note" nonote
rm -f "$T/pack"/*.sh
good notrun
refused "--release sid" "--release 'sid'" --release sid notrun
refused "a reproducer that is not there" "no reproducer 'nosuch'" nosuch

# NOT RUN on both: no boot, a record a release, exit 0.
o=$("$run" --pack "$T/pack" --release both --save "$T/res" notrun 2>&1)
expect_eq "NOT RUN on both releases: exit status" 0 "$?"
sed 's/^/  | /' <<<"$o"
check "  ... nothing booted" eval '! grep -q "sdswarm-testhost exec" <<<"$o"'
for r in bookworm trixie; do
	check "  ... $r's record says NOT RUN" grep -qxP 'verdict\tNOT RUN' "$T/res/$r/notrun.tsv"
done

# The table of records, one of them not the expected verdict.
cp "$T/res/bookworm/notrun.tsv" "$T/res/bookworm/notrun.tsv.orig"
sed -i 's/^verdict\tNOT RUN$/verdict\tREPRODUCED/; s/^wall_s\t.*/wall_s\t75.4/' "$T/res/bookworm/notrun.tsv"
tab=$("$run" --pack "$T/pack" --table --results "$T/res")
echo "$tab" | sed 's/^/  | /'
check "the table has a column a release" grep -qF '| reproducer | Debian 12 (bookworm, Linux 6.1) | Debian 13 (trixie, Linux 6.12) |' <<<"$tab"
check "  ... marks the verdict that was not expected, with the wall time" grep -qF '| `notrun` | **REPRODUCED** (expected NOT RUN) in 1 min 15 s; not on this release | **NOT RUN**; nor on this one |' <<<"$tab"
js=$("$run" --pack "$T/pack" --table --json --results "$T/res")
check "the JSON table parses" python3 -c 'import json, sys; json.load(sys.stdin)' <<<"$js"
check "  ... bookworm not as expected, trixie as expected" python3 -c '
import json, sys
r = json.load(sys.stdin)["reproducers"][0]["results"]
sys.exit(0 if r["bookworm"]["as_expected"] is False and r["bookworm"]["wall_s"] == 75.4 and r["trixie"]["as_expected"] is True else 1)' <<<"$js"
printf '# t\n\n<!-- repro-table -->\nold\n<!-- /repro-table -->\n\nafter\n' >"$T/doc.md"
"$run" --pack "$T/pack" --results "$T/res" --update "$T/doc.md" >/dev/null
expect_eq "--update puts the table between the markers" "$(printf '# t\n\n<!-- repro-table -->\n%s\n<!-- /repro-table -->\n\nafter' "$tab")" "$(cat "$T/doc.md")"

# The README's table is the runner's, from the committed records.
want=$("$run" --table --results "$top/testhost/repro/results")
check "the committed records make a table" test -n "$want"
for doc in README.md testhost/README.md; do
	have=$(awk '$0 == "<!-- /repro-table -->" { p = 0 } p { print } $0 == "<!-- repro-table -->" { p = 1 }' "$top/$doc")
	check "$doc has the table's markers" test -n "$have"
	expect_eq "$doc's pack table is 'repro --table --results testhost/repro/results'" "$want" "$have"
done
finish
