#!/bin/bash
# SPDX-License-Identifier: MIT
# Synthetic partition tables through the real tools. test-ptable
# --write-image writes the table blocks of a LUN into a sparse image; sfdisk,
# gdisk/sgdisk and parted must list exactly the partitions ptable_layout()
# describes and find nothing wrong. The other way round, test-ptable
# --parse-image must read tables sfdisk wrote as the kernel would; where the
# kernel can be asked (root, a loop device, a kernel with the GPT and MBR
# parsers), its own partitions are compared with the parser's.
#
# 4096-byte images need a loop device with 4096-byte sectors (root): the
# tools take 512 bytes for a plain file. Without one, fdisk -b 4096 checks
# them and gdisk/parted are skipped for them (said so in the log).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"

unit=${SDSWARM_UNIT:-$SDSWARM_TOP/build/address/tests/unit}
tp=$unit/test-ptable
[ -x "$tp" ] || skip "no $tp (make SANITIZE=address build/address/tests/unit/test-ptable)"
requires sfdisk fdisk gdisk parted truncate awk
have_sgdisk=0
command -v sgdisk >/dev/null 2>&1 && have_sgdisk=1

dir=$(mktemp -d "${TMPDIR:-/tmp}/sdswarm-ptable.XXXXXX")
on_exit "rm -rf '$dir'"
size=$((4 * 1024 * 1024 * 1024))
loops=()
on_exit 'for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done'

# A read-only loop device over an image, with 4096-byte sectors if asked.
loop_ok=0
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null 2>&1; then
	truncate -s 1M "$dir/probe.img"
	if l=$(losetup -r -f --show "$dir/probe.img" 2>/dev/null); then
		losetup -d "$l"
		loop_ok=1
	fi
fi
[ $loop_ok = 1 ] || echo "note: skip 4096-byte gdisk/parted checks and the kernel check: no loop devices (needs root)"

attach() { # IMG BS [-P] -> prints the device
	local l
	l=$(losetup -r -b "$2" ${3:-} -f --show "$1") || return 1
	loops+=("$l")
	echo "$l"
}

detach() {
	local l=$1 i
	losetup -d "$l"
	for i in "${!loops[@]}"; do
		[ "${loops[i]}" = "$l" ] && unset 'loops[i]'
	done
}

# sfdisk --dump -> "N START SIZE TYPE UUID" (UUID "-" for MBR).
sfdisk_parts() {
	sfdisk --dump "$1" | awk -F' : ' '/ : start=/ {
		match($1, /[0-9]+$/); n = substr($1, RSTART)
		s = z = t = "-"; u = "-"
		k = split($2, f, ",")
		for (i = 1; i <= k; i++) {
			split(f[i], kv, "=")
			key = kv[1]; v = kv[2]
			gsub(/ /, "", key); gsub(/ /, "", v)
			if (key == "start") s = v
			else if (key == "size") z = v
			else if (key == "type") t = toupper(v)
			else if (key == "uuid") u = toupper(v)
		}
		print n, s, z, t, u }'
}

# "N START SIZE" from gdisk -l, parted print, fdisk -l.
gdisk_parts() {
	awk '/^Number  Start/ { on = 1; next }
	     on && $1 ~ /^[0-9]+$/ { print $1, $2, $3 - $2 + 1 }' "$1"
}
parted_parts() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /s$/ {
		s = $2; z = $4; sub(/s$/, "", s); sub(/s$/, "", z)
		print $1, s, z }' "$1"
}
fdisk_parts() { # FILE IMG
	awk -v img="$2" 'index($1, img) == 1 {
		n = substr($1, length(img) + 1)
		if ($2 == "*") { $2 = $3; $4 = $5 }
		print n, $2, $4 }' "$1"
}

# The kernel's view of a table, from the table view the writer prints: an
# extended partition shows as 2 blocks (512) or 1 block (larger).
kernel_view() { # BS < "N START SIZE TYPE UUID"
	awk -v bs="$1" '{ if ($4 == "5") $3 = (bs == 512 ? 2 : 1); print }'
}

check_image() { # KIND BS NPARTS [SIZES]
	local kind=$1 bs=$2 n=$3 sizes=${4:-} name img out dev want got
	name=$kind-$bs-$n${sizes:+-sized}
	img=$dir/$name.img
	out=$dir/$name
	if ! "$tp" --write-image "$img" --ptable "$kind" --parts "$n" \
		--size $size --block "$bs" ${sizes:+--sizes "$sizes"} \
		>"$out.want"; then
		fail "$name: test-ptable --write-image"
		return
	fi
	want=$(sed 1d "$out.want")
	expect_eq "$name: the image is sparse" 1 \
		"$([ "$(du -k "$img" | cut -f1)" -lt 1024 ] && echo 1 || echo 0)"
	expect_eq "$name: test-ptable --parse-image (kernel view)" \
		"$(kernel_view "$bs" <<<"$want")" \
		"$("$tp" --parse-image "$img" --block "$bs" | sed 1d)"

	dev=$img
	if [ "$bs" != 512 ]; then
		if [ $loop_ok = 0 ]; then
			fdisk -b "$bs" -l "$img" >"$out.fdisk" 2>&1
			expect_eq "$name: fdisk -b $bs -l" \
				"$(cut -d' ' -f1-3 <<<"$want")" \
				"$(fdisk_parts "$out.fdisk" "$img")"
			check "$name: fdisk -b $bs verify" grep -q 'No errors detected' \
				<(printf 'v\nq\n' | fdisk -b "$bs" "$img" 2>&1)
			echo "note: skip gdisk/parted on $name: no 4096-byte loop device"
			return
		fi
		dev=$(attach "$img" "$bs") || { fail "$name: losetup"; return; }
	fi

	# sfdisk: every partition, start, size, type and GUID; the label id.
	expect_eq "$name: sfdisk --dump partitions" "$want" "$(sfdisk_parts "$dev")"
	expect_eq "$name: sfdisk --dump label-id" \
		"$(head -1 "$out.want" | cut -d' ' -f2 | tr a-f A-F)" \
		"$(sfdisk --dump "$dev" | awk '/^label-id:/ { print toupper($2) }' |
			sed 's/^0X/0x/')"
	sfdisk --verify "$dev" >"$out.verify" 2>&1
	check "$name: sfdisk --verify exit status" test $? -eq 0
	check "$name: sfdisk --verify finds no errors" \
		grep -q 'No errors detected' "$out.verify"

	if [ "$kind" = gpt ]; then
		gdisk -l "$dev" >"$out.gdisk" 2>&1 </dev/null
		check "$name: gdisk -l finds a valid GPT with protective MBR" \
			grep -q 'Found valid GPT with protective MBR; using GPT' "$out.gdisk"
		check "$name: gdisk -l reports no problem" \
			bash -c "! grep -Eiq 'warning|caution|problem|invalid|corrupt|mismatch|damaged|crc' '$out.gdisk'"
		expect_eq "$name: gdisk -l partitions" \
			"$(cut -d' ' -f1-3 <<<"$want")" "$(gdisk_parts "$out.gdisk")"
		if [ $have_sgdisk = 1 ]; then
			sgdisk -v "$dev" >"$out.sgdisk" 2>&1
			check "$name: sgdisk -v finds no problems" \
				grep -q 'No problems found' "$out.sgdisk"
			# Listed sizes may end off a MiB boundary: a caution.
			[ -n "$sizes" ] ||
				check "$name: sgdisk -v cautions about nothing" \
					bash -c "! grep -Eiq 'warning|caution' '$out.sgdisk'"
		fi
	fi

	parted -s "$dev" unit s print >"$out.parted" 2>&1
	check "$name: parted print exit status" test $? -eq 0
	check "$name: parted print has no warning or error" \
		bash -c "! grep -Eiq 'warning|error|fix' '$out.parted'"
	check "$name: parted sees the right label" grep -q \
		"Partition Table: $([ "$kind" = gpt ] && echo gpt || echo msdos)" "$out.parted"
	expect_eq "$name: parted partitions" "$(cut -d' ' -f1-3 <<<"$want")" \
		"$(parted_parts "$out.parted")"
	[ "$dev" = "$img" ] || detach "$dev"
}

# --- synthetic tables through the tools ---------------------------------
check_image gpt 512 63
check_image gpt 512 5
check_image gpt 4096 63
check_image gpt 4096 5
check_image mbr 512 4
check_image mbr 512 5
check_image mbr 512 15
check_image mbr 4096 5
check_image mbr 4096 15
check_image gpt 512 4 2048,100000,1001,0
check_image mbr 512 7 4096,4096,4096,1001,0

# --- the parser on tables sfdisk wrote ----------------------------------
# MBR: the extended partition in slot 2 (logicals sort after slot 3), odd
# sizes and types. GPT: gaps in the numbering, a foreign type.
foreign() { # NAME SCRIPT
	local img=$dir/$1.img want got
	truncate -s 1G "$img"
	if ! sed "s|@IMG@|$img|" <<<"$2" | sfdisk -q "$img" >/dev/null 2>&1; then
		fail "$1: sfdisk could not write the table"
		return
	fi
	want=$(sfdisk_parts "$img" | kernel_view 512)
	got=$("$tp" --parse-image "$img" --block 512 | sed 1d |
		awk '{ $4 = toupper($4); print }')
	expect_eq "$1: --parse-image reads sfdisk's table" "$want" "$got"
}
foreign sfdisk-mbr 'label: dos
@IMG@1 : start=2048, size=4096, type=83
@IMG@2 : start=8192, size=100000, type=5
@IMG@3 : start=110000, size=5000, type=c
@IMG@5 : start=10240, size=1001, type=83
@IMG@6 : start=14000, size=3000, type=82
@IMG@7 : start=20000, size=88000, type=83'
foreign sfdisk-gpt 'label: gpt
@IMG@1 : start=2048, size=4096, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4
@IMG@3 : start=10000, size=777, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F
@IMG@9 : start=20480, size=100000, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4'

# --- the kernel's own view, where it can be had --------------------------
kernel_check() { # KIND BS NPARTS
	local name=kernel-$1-$2-$3 img dev base p want got
	img=$dir/$name.img
	"$tp" --write-image "$img" --ptable "$1" --parts "$3" --size $size \
		--block "$2" >/dev/null || { fail "$name: write"; return; }
	want=$("$tp" --parse-image "$img" --block "$2" | sed 1d |
		awk -v f=$(($2 / 512)) '{ print $1, $2 * f, $3 * f }')
	dev=$(attach "$img" "$2" -P) || { fail "$name: losetup -P"; return; }
	base=/sys/block/${dev#/dev/}
	got=$(for p in "$base"/"${dev#/dev/}"p*; do
		[ -e "$p/partition" ] || continue
		echo "$(cat "$p/partition") $(cat "$p/start") $(cat "$p/size")"
	done | sort -n)
	detach "$dev"
	if [ -z "$got" ]; then
		echo "note: skip kernel check $name: the kernel made no partitions (built without CONFIG_EFI_PARTITION/CONFIG_MSDOS_PARTITION?)"
		return
	fi
	expect_eq "$name: the kernel's partitions are the parser's" "$want" "$got"
}
if [ $loop_ok = 1 ]; then
	kernel_check gpt 512 63
	kernel_check gpt 4096 5
	kernel_check mbr 512 15
	kernel_check mbr 4096 5
fi

finish
