#!/bin/bash
# SPDX-License-Identifier: MIT
# `make run`'s script on a small config (257 disks x 2 partitions): a
# captive run of sdswarmd that says what a target is and that a MISSED one
# is reported, not failed; shows the sdz/sdaa and sdiv/sdiw boundaries with
# the dev_t sdnum computes; marks the 771-file figures (noisy); keeps the
# io_uring internals for V=1, which also shows the daemon's log; leaves no
# mount, daemon or folder behind; and a config the daemon refuses fails
# with its log.
. "$(dirname "$0")/../lib/common.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
RUN=$top/scripts/run-main
for p in sdswarmd sdswarm sdswarm-bench sdnum; do
	[ -x "$SDSWARM_BIN/$p" ] || skip "no $SDSWARM_BIN/$p (make SANITIZE=address test-build)"
done
[ -e /dev/fuse ] || skip "no /dev/fuse: FUSE cannot mount here"
T=$(tmpdir)
mkdir -p "$T/tmp"
SDNUM=$SDSWARM_BIN/sdnum
# lacks PATTERN FILE: no line of FILE matches
lacks() { ! grep -q -- "$1" "$2"; }

cat >"$T/257.conf" <<'EOF'
[target]
scheme = linux
[luns]
count = 257
size = 1G
partitions = 2
ptable = mbr
EOF

# RUN_MAIN_COLD=0: no cold rounds, which would drop the whole machine's
# caches under the other tests
TMPDIR=$T/tmp RUN_MAIN_COLD=0 timeout -k 5 300 "$RUN" "$SDSWARM_BIN" "$T/257.conf" >"$T/out" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -qiE 'fusermount|cannot mount|/dev/fuse' "$T/out"; then
	skip "FUSE cannot mount here: $(grep -iE 'fusermount|cannot mount|/dev/fuse' "$T/out" | head -1)"
fi
expect_eq "run-main on 257 disks: exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/  | /' "$T/out"
check "says what a target is" grep -q 'A "target" below is a figure the project aims for' "$T/out"
check "says a MISSED target is reported, not failed" grep -q 'A MISSED target is reported, not failed' "$T/out"
check "a captive run (sdswarmd --run), twice: the config, then cache = direct" \
	test "$(grep -c "^== sdswarmd --config .* --run 'run-main --captive'" "$T/out")" = 2
check "counts the files" grep -q '^== 771 disk and partition files (257 disks)' "$T/out"
for pair in "25 26" "255 256"; do
	set -- $pair
	a=$("$SDNUM" name "$1") b=$("$SDNUM" name "$2")
	da=$("$SDNUM" --scheme linux devt "$1") db=$("$SDNUM" --scheme linux devt "$2")
	check "the $a/$b boundary with sdnum's dev_t ($da, $db)" \
		grep -qE "^   $a +disk $1 +$da +$b +disk $2 +$db " "$T/out"
done
check "sdiw is 8:256 under linux (as the issue says)" grep -qE '^   sdiv .* sdiw +disk 256 +8:256 ' "$T/out"
check "no boundary past the last disk" lacks 'sdzz ' "$T/out"
check "the tables, two of them (warm, cache = direct)" test "$(grep -c '^io_uring / sync open rate' "$T/out")" = 2
check "... no cold rounds (RUN_MAIN_COLD=0)" grep -q '^== no cold rounds (RUN_MAIN_COLD=0)' "$T/out"
check "771 files: every target marked (noisy)" \
	test "$(grep -cE '^(io_uring / sync open rate|open rate / tmpfs reference rate) .*(met|MISSED) \(noisy\)$' "$T/out")" = 4
check "... with a note saying why" grep -q '(noisy) only 771 nodes, under 1000' "$T/out"
check "no io_uring internals without V=1" lacks 'OPENAT(direct)' "$T/out"
check "... but a line saying -v has them" grep -qE '^  \([0-9]+ notes on how it was measured: -v\)$' "$T/out"
check "no daemon log without V=1" lacks "sdswarmd's log" "$T/out"
check "the end says so" grep -q '^== done' "$T/out"
check "no mount left" lacks " $T/" /proc/mounts
check "its folder removed" test -z "$(ls -A "$T/tmp")"
refdir=$(sed -n 's/^  reference DIR2: \(.*\)\/tree (tmpfs)$/\1/p' "$T/out" | head -1)
if [ -n "$refdir" ]; then
	check "the tmpfs reference removed ($refdir)" test ! -e "$refdir"
fi

# V=1: the internals and the daemon's log; a config with its own [fuse]
# section runs one phase
cat >"$T/30.conf" <<'EOF'
[luns]
count = 30
partitions = 0
[fuse]
cache = page
EOF
TMPDIR=$T/tmp V=1 RUN_MAIN_COLD=0 timeout -k 5 300 "$RUN" "$SDSWARM_BIN" "$T/30.conf" >"$T/out" 2>&1
expect_eq "V=1 on 30 disks: exit 0" 0 "$?"
check "V=1: the io_uring internals" grep -qE 'OPENAT\(direct\)|plain descriptors' "$T/out"
check "V=1: the daemon's log" grep -q "^== sdswarmd's log:" "$T/out"
check "one phase (the config has [fuse])" test "$(grep -c '^== sdswarmd --config' "$T/out")" = 1
check "30 disks: only the sdz/sdaa boundary, then the last disk" \
	grep -qE '^   sdad +disk 29 +[0-9]+:[0-9]+ +the last disk' "$T/out"
check "no sanitizer report in the daemon's log" lacks 'Sanitizer' "$T/out"

# a config the daemon refuses: exit 1, its log shown
printf '[luns]\ncount = 3\nbogus_key = 1\n' >"$T/bad.conf"
TMPDIR=$T/tmp timeout -k 5 120 "$RUN" "$SDSWARM_BIN" "$T/bad.conf" >"$T/out" 2>&1
expect_eq "a refused config: exit 1" 1 "$?"
check "... says the daemon was not ready, with its log" grep -q 'before it was ready; its log:' "$T/out"
check "... the log names the key" grep -q 'bogus_key' "$T/out"
TMPDIR=$T/tmp timeout -k 5 60 "$RUN" "$SDSWARM_BIN" "$T/none.conf" >"$T/out" 2>&1
expect_eq "a missing config: exit 1" 1 "$?"
check "... named" grep -q "cannot read $T/none.conf" "$T/out"
check "nothing left behind" test -z "$(ls -A "$T/tmp")"
finish
