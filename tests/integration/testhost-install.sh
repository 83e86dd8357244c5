#!/bin/bash
# SPDX-License-Identifier: MIT
# The test host as a user gets it from `make install DESTDIR=... PREFIX=/usr`,
# with no VM: bin/sdswarm-testhost, its man page, its bash completion and
# its data (every file of testhost/, modes kept, in share/sdswarm/testhost,
# with the version); the installed command finds that data from where it
# is, answers --help, --version (the installed programs' version) and each
# command's --help, refuses bad usage with exit 2 before anything boots
# ("did you mean" for a mistyped command), and keeps its cache under
# $XDG_CACHE_HOME/sdswarm (~/.cache/sdswarm without it; SDSWARM_VM_DIR
# overrides), never in its own folder: `paths` says so, and a build that
# fails early has made its folders there. From the checkout the same
# command keeps its cache in build/, and tests/vm/run and tests/vm/exec
# still forward to it.
. "$(dirname "$0")/../lib/common.sh"
requires make install
[ -x "$SDSWARM_PLAIN_BIN/sdnum" ] || skip "no $SDSWARM_PLAIN_BIN/sdnum: run make"
top=$SDSWARM_TOP
T=$(tmpdir)
D=$T/dest

# The plain build's folder is make's B (its programs are B/bin).
make -C "$top" --no-print-directory B="${SDSWARM_PLAIN_BIN%/bin}" \
	install DESTDIR="$D" PREFIX=/usr >"$T/install.log" 2>&1
rc=$?
expect_eq "make install DESTDIR=... PREFIX=/usr" 0 "$rc"
[ "$rc" = 0 ] || { tail -20 "$T/install.log"; finish; }
th=$D/usr/bin/sdswarm-testhost
home=$D/usr/share/sdswarm/testhost

# --- what was installed ---------------------------------------------------------
check "bin/sdswarm-testhost is installed, executable" test -x "$th"
check "its man page is installed" test -f "$D/usr/share/man/man1/sdswarm-testhost.1"
check "bash completes it" test -L "$D/usr/share/bash-completion/completions/sdswarm-testhost"
check "the completion names it" grep -q 'complete -F _sdswarm_testhost sdswarm-testhost' \
	"$D/usr/share/bash-completion/completions/sdswarm"
(cd "$top/testhost" && find . -type f ! -name sdswarm-testhost | sort) >"$T/tree.list"
(cd "$home" && find . -type f ! -name VERSION | sort) >"$T/installed.list"
check "share/sdswarm/testhost holds every file of testhost/ and no other" \
	cmp -s "$T/tree.list" "$T/installed.list"
bad=""
while read -r f; do
	cmp -s "$top/testhost/$f" "$home/$f" || bad="$bad $f"
	want=-; [ -x "$top/testhost/$f" ] && want=x
	got=-; [ -x "$home/$f" ] && got=x
	[ "$want" = "$got" ] || bad="$bad $f($got)"
done <"$T/tree.list"
expect_eq "each installed file is the tree's, executable where it is" "" "$bad"
for f in run exec build build-sd-module repro/run multipath/run; do
	check "$f runs from there" test -x "$home/$f"
done
check "the guest side and the scenarios came too" \
	test -f "$home/guest/init" -a -f "$home/scenarios/scsi-debug.sh" -a -f "$home/lib/host.sh"
(cd "$home" && find . -type f -exec sha256sum {} + | sort) >"$T/before.sums"

# --- the command's answers -------------------------------------------------------
XDG_CACHE_HOME=$T/xdg
export XDG_CACHE_HOME
rc() { # WANT DESC CMD...: CMD's exit status, its output in $T/out
	local want=$1 desc=$2 got
	shift 2
	"$@" >"$T/out" 2>&1
	got=$?
	expect_eq "$desc: exit status" "$want" "$got"
}
said() { # DESC PATTERN: the last command's output matches PATTERN (grep -E)
	if grep -qE -- "$2" "$T/out"; then ok "$1"; else fail "$1: no /$2/ in: $(head -5 "$T/out")"; fi
}
rc 0 "sdswarm-testhost --help" "$th" --help
said "... prints its usage" '^usage: sdswarm-testhost COMMAND'
said "... names every command" '^  run SCENARIO'
rc 0 "sdswarm-testhost --version" "$th" --version
v=$("$D/usr/bin/sdnum" --version)
expect_eq "... the installed programs' version" "sdswarm-testhost ${v#sdnum }" "$(cat "$T/out")"
for c in run exec repro multipath build sd-module paths; do
	rc 0 "sdswarm-testhost $c --help" "$th" "$c" --help
done
rc 0 "sdswarm-testhost help run" "$th" help run
said "... is run's help, naming the command" '^usage: sdswarm-testhost run '
rc 2 "sdswarm-testhost (no command)" "$th"
said "... prints its usage" '^usage: sdswarm-testhost COMMAND'
rc 2 "sdswarm-testhost rnu" "$th" rnu
said "... did you mean run" "no command 'rnu'.*did you mean run\?"
rc 2 "sdswarm-testhost --verison" "$th" --verison
said "... did you mean --version" "did you mean --version\?"
rc 2 "sdswarm-testhost run (no scenario)" "$th" run
rc 2 "sdswarm-testhost run no-such-scenario" "$th" run no-such-scenario
said "... names it and the ones there are" "no scenario 'no-such-scenario' \(have: .*scsi-debug"
rc 2 "sdswarm-testhost run scsi-debug --smp many" "$th" run scsi-debug --smp many
rc 2 "sdswarm-testhost run scsi-debug --mem (no value)" "$th" run scsi-debug --mem
rc 2 "sdswarm-testhost exec --disks 12x" "$th" exec --disks 12x --shell
said "... names the value" '--disks 12x: not a number'
rc 2 "sdswarm-testhost exec (nothing to run)" "$th" exec
rc 2 "sdswarm-testhost repro no-such-bug" "$th" repro no-such-bug
rc 2 "sdswarm-testhost paths nowhere" "$th" paths nowhere
check "no usage error made the cache" test ! -e "$T/xdg"

# --- where it keeps what ---------------------------------------------------------
expect_eq "paths home: its data" "$home" "$("$th" paths home)"
expect_eq "paths bin: the installed programs" "$D/usr/bin" "$("$th" paths bin)"
expect_eq "paths cache: \$XDG_CACHE_HOME/sdswarm" "$T/xdg/sdswarm" "$("$th" paths cache)"
expect_eq "paths vm: under it" "$T/xdg/sdswarm/vm" "$("$th" paths vm)"
expect_eq "paths logs: under that" "$T/xdg/sdswarm/vm/logs" "$("$th" paths logs)"
expect_eq "without XDG_CACHE_HOME: ~/.cache/sdswarm" "$T/home/.cache/sdswarm" \
	"$(env -u XDG_CACHE_HOME HOME="$T/home" "$th" paths cache)"
expect_eq "a relative XDG_CACHE_HOME is ignored (XDG's rule)" "$T/home/.cache/sdswarm" \
	"$(XDG_CACHE_HOME=cache HOME="$T/home" "$th" paths cache)"
expect_eq "SDSWARM_VM_DIR names the image's folder" "$T/vmdir" \
	"$(SDSWARM_VM_DIR=$T/vmdir "$th" paths vm)"
"$th" paths >"$T/out"
check "paths alone lists all five" test "$(awk '{ print $1 }' "$T/out" | tr '\n' ' ')" = "home cache vm logs bin "

# A build that stops at its first check (a kernel file that is not there)
# has made its folders in the cache, and nothing in the installed tree.
"$th" build -q --kernel "$T/no-vmlinuz" --modules "$T/no-modules" >"$T/out" 2>&1
rc=$?
if [ "$rc" = 77 ]; then
	echo "SKIP (part): $(cat "$T/out")"
else
	expect_eq "build --kernel MISSING fails" 1 "$rc"
	said "... naming the file" "--kernel $T/no-vmlinuz: no such file"
	check "... after making its folders under \$XDG_CACHE_HOME/sdswarm/vm" \
		test -d "$T/xdg/sdswarm/vm/logs" -a -d "$T/xdg/sdswarm/vm/dl"
fi
(cd "$home" && find . -type f -exec sha256sum {} + | sort) >"$T/after.sums"
check "nothing was written into share/sdswarm/testhost" cmp -s "$T/before.sums" "$T/after.sums"

# --- from the checkout -----------------------------------------------------------
expect_eq "from the checkout the cache is its build/" "$top/build" \
	"$("$top/testhost/sdswarm-testhost" paths cache)"
expect_eq "... and the programs its build/bin" "$top/build/bin" \
	"$(env -u SDSWARM_VM_BIN "$top/testhost/sdswarm-testhost" paths bin)"
rc 2 "tests/vm/run no-such-scenario (the forwarder)" "$top/tests/vm/run" no-such-scenario
said "... says where the test host went" 'moved: testhost/sdswarm-testhost'
said "... and run answers" "no scenario 'no-such-scenario'"
rc 2 "tests/vm/exec --disks 12x (the forwarder)" "$top/tests/vm/exec" --disks 12x --shell
said "... and exec answers" '--disks 12x: not a number'

# --- the man page ------------------------------------------------------------------
m=$top/man/sdswarm-testhost.1
check "the man page has an EXIT STATUS section" grep -q '^\.SH "\?EXIT STATUS' "$m"
check "it documents exit status 2 (usage)" \
	awk '/^\.SH "?EXIT STATUS/ { s = 1; next } /^\.SH/ { s = 0 } s && /usage/ { found = 1 } END { exit !found }' "$m"
for c in run exec repro multipath build sd-module paths; do
	check "it documents $c" grep -q "^\.B[IR]\{0,1\} $c\b" "$m"
done
finish
