#!/bin/bash
# SPDX-License-Identifier: MIT
# The layers, by their #include lines: every "..." include of every .c and
# .h under target/, numbering/ and common/, resolved as the compiler does
# (the includer's folder, then -I. -Icommon -Inumbering -Itarget), must not
# cross a layer the wrong way:
#   scsi/ includes no front end;
#   a front end (frontend/iscsi, tcmu, fuse) includes no other's headers,
#   nothing of store/ and not control.h;
#   store/ includes nothing else of target/;
#   numbering/ includes nothing of target/; common/ nothing of either.
# A violation is named file:line. Known ones would be listed in ALLOW
# below, each with the step that removes it (issue 17 emptied it); an
# ALLOW entry that no longer occurs fails too, so the list only shrinks.
#
# layering.sh ROOT: check the tree at ROOT only (exit 0 clean, 1 not).
# layering.sh: check this tree, then that a copy with a violation added
# (one per rule) fails, naming it, and that a stale ALLOW entry does.
set -u

# "INCLUDER -> INCLUDED", both as resolved paths from the top.
ALLOW=()

# The layer of a path from the top, in REPLY: fe:NAME, scsi, store, daemon
# (the rest of target/), numbering, common or other. (Globals, not $(...):
# a subshell per include made the check take a minute.)
layer() {
	case $1 in
	target/frontend/*/*)
		REPLY=${1#target/frontend/}
		REPLY=fe:${REPLY%%/*} ;;
	target/scsi/*) REPLY=scsi ;;
	target/store/*) REPLY=store ;;
	target/*) REPLY=daemon ;;
	numbering/*) REPLY=numbering ;;
	common/*) REPLY=common ;;
	*) REPLY=other ;;
	esac
}

# In WHY: why layer FL may not include TO (layer TL); empty if it may.
forbidden() { # FL TO TL
	local fl=$1 to=$2 tl=$3
	WHY=
	case $fl in
	scsi)
		[[ $tl == fe:* ]] && WHY="scsi/ includes no front end" ;;
	fe:*)
		if [[ $tl == fe:* && $tl != "$fl" ]]; then
			WHY="a front end includes no other front end's headers"
		elif [ "$tl" = store ]; then
			WHY="a front end reaches the store only through the LUN layer"
		elif [ "$to" = target/control.h ]; then
			WHY="a front end does not register in control.h's process-wide registry"
		fi ;;
	store)
		[[ $to == target/* && $tl != store ]] &&
			WHY="store/ is the bottom of target/: it includes nothing else of it" ;;
	numbering)
		[[ $to == target/* ]] && WHY="numbering/ includes nothing of target/" ;;
	common)
		[[ $to == target/* || $to == numbering/* ]] &&
			WHY="common/ includes nothing of target/ or numbering/" ;;
	esac
	return 0
}

# Prints every violation and stale ALLOW entry of the tree at $1; exit 1
# if there is any. Includes are taken as written: none climbs with "..".
check_tree() {
	local root=$1 f fl line name dir cand to key bad=0 a
	local -A allowed=() seen=()
	for a in "${ALLOW[@]}"; do allowed[$a]=1; done
	while IFS= read -r f; do
		f=${f#"$root"/}
		dir=${f%/*}
		layer "$f"
		fl=$REPLY
		while IFS=: read -r line name; do
			to=
			for cand in "$dir/$name" "$name" "common/$name" \
				"numbering/$name" "target/$name"; do
				if [ -f "$root/$cand" ]; then
					to=$cand
					break
				fi
			done
			[ -n "$to" ] || continue
			layer "$to"
			forbidden "$fl" "$to" "$REPLY"
			[ -n "$WHY" ] || continue
			key="$f -> $to"
			if [ -n "${allowed[$key]:-}" ]; then
				seen[$key]=1
				continue
			fi
			echo "$f:$line: #include \"$name\" ($to): $WHY"
			bad=1
		done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$root/$f" |
			 sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
	done < <(find "$root/target" "$root/numbering" "$root/common" \
		-name '*.[ch]' -type f 2>/dev/null | sort)
	for a in "${ALLOW[@]}"; do
		if [ -z "${seen[$a]:-}" ]; then
			echo "allowed \"$a\" no longer occurs: remove it from ALLOW in tests/integration/layering.sh"
			bad=1
		fi
	done
	return $bad
}

if [ $# -eq 1 ]; then
	check_tree "$1"
	exit
fi

. "$(dirname "$0")/../lib/common.sh"
requires find sed grep
out=$(check_tree "$SDSWARM_TOP")
rc=$?
[ -n "$out" ] && echo "$out"
expect_eq "no include crosses a layer but the ${#ALLOW[@]} allowed" 0 $rc

# Each rule fails on a new violation, naming file:line; so does a stale
# ALLOW entry. Every case starts from a fresh copy of this tree.
T=$(tmpdir)
mutate() { # DESC FILE EXPECT: append LINE (from stdin) to FILE, expect EXPECT
	local desc=$1 file=$2 want=$3 got
	rm -rf "$T/tree"
	mkdir -p "$T/tree"
	cp -r "$SDSWARM_TOP/target" "$SDSWARM_TOP/numbering" \
		"$SDSWARM_TOP/common" "$T/tree/"
	if [ "$file" = - ]; then
		# this script with an entry nothing matches, on the tree as is
		sed 's|^ALLOW=(.*|ALLOW=("target/frontend/tcmu/tcmu.c -> target/control.h")|' \
			"$0" >"$T/layering.sh"
		got=$(bash "$T/layering.sh" "$T/tree")
		expect_eq "$desc: refused" 1 $?
		check "$desc: named ('$want')" grep -qF -- "$want" <<<"$got"
		return
	fi
	cat >>"$T/tree/$file"
	got=$("$0" "$T/tree")
	expect_eq "$desc: refused" 1 $?
	check "$desc: named ('$want')" grep -qF -- "$want" <<<"$got"
}
n=$(($(wc -l <"$SDSWARM_TOP/target/scsi/sense.c") + 1))
mutate "scsi/ including a front end" target/scsi/sense.c \
	"target/scsi/sense.c:$n: #include \"frontend/iscsi/iscsi.h\"" \
	<<<'#include "frontend/iscsi/iscsi.h"'
n=$(($(wc -l <"$SDSWARM_TOP/target/frontend/iscsi/pdu.c") + 1))
mutate "iscsi/ including tcmu's header" target/frontend/iscsi/pdu.c \
	"target/frontend/iscsi/pdu.c:$n: #include \"frontend/tcmu/tcmu_i.h\"" \
	<<<'#include "frontend/tcmu/tcmu_i.h"'
n=$(($(wc -l <"$SDSWARM_TOP/target/frontend/iscsi/conn.c") + 1))
mutate "a front end including store/ anew" target/frontend/iscsi/conn.c \
	"target/frontend/iscsi/conn.c:$n: #include \"store/store.h\"" \
	<<<'#include "store/store.h"'
n=$(($(wc -l <"$SDSWARM_TOP/numbering/names.c") + 1))
mutate "numbering/ including target/" numbering/names.c \
	"numbering/names.c:$n: #include \"lun.h\" (target/lun.h)" \
	<<<'#include "lun.h"'
n=$(($(wc -l <"$SDSWARM_TOP/target/store/mem.c") + 1))
mutate "store/ including the LUN layer" target/store/mem.c \
	"target/store/mem.c:$n: #include \"lun.h\"" <<<'#include "lun.h"'
n=$(($(wc -l <"$SDSWARM_TOP/target/frontend/tcmu/tcmu.c") + 1))
mutate "a front end including control.h" target/frontend/tcmu/tcmu.c \
	"target/frontend/tcmu/tcmu.c:$n: #include \"control.h\" (target/control.h)" \
	<<<'#include "control.h"'
n=$(($(wc -l <"$SDSWARM_TOP/target/frontend/fuse/fusefe.c") + 1))
mutate "a front end including store/" target/frontend/fuse/fusefe.c \
	"target/frontend/fuse/fusefe.c:$n: #include \"store/store.h\"" \
	<<<'#include "store/store.h"'
mutate "an allowed include gone, its entry kept" - \
	'allowed "target/frontend/tcmu/tcmu.c -> target/control.h" no longer occurs' \
	</dev/null
finish
