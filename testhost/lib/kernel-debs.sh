# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced by testhost/build-sd-module and testhost/build-kernel: Debian's
# kernel packages of one exact version, fetched with `apt-get download`
# into a download folder (build/vm/dl beside the image by default) and
# never installed. Each function prints what it found; on failure it prints
# a line starting "SKIP:" and returns 77, so a caller can `|| exit 77`.
# apt runs with the options in the array rel_apt (testhost/lib/release.sh's
# rel_apt_opts: a release's private sources; empty, the system's apt).
#
#   kdeb_image_pkg
#       the kernel package linux-image-amd64 depends on
#       (linux-image-6.1.0-57-amd64), nothing when apt knows none
#   kdeb_fetch DL LOG PACKAGE VERSION
#       the path of PACKAGE_VERSION_*.deb in DL, downloaded (its output
#       appended to LOG) when not there yet
#   kdeb_version KVER
#       the Debian version of linux-image-KVER: what dpkg has installed
#       (with the system's apt), else apt's candidate
#   kdeb_image_version VMDIR
#       the version of the kernel package `sdswarm-testhost build` unpacked in
#       VMDIR/kernel (6.1.192-3), nothing when there is none

rel_apt=(${rel_apt[@]+"${rel_apt[@]}"})

kdeb_image_pkg() {
	apt-cache "${rel_apt[@]}" depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}

kdeb_fetch() {
	local dl=$1 log=$2 p=$3 v=$4 f
	f=$(ls "$dl/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		mkdir -p "$dl" "$(dirname "$log")"
		echo "kernel-debs: downloading $p $v" >&2
		# apt's _apt user cannot write into build/; it warns and
		# downloads as root, which is what we want here.
		if ! (cd "$dl" && apt-get "${rel_apt[@]}" download "$p=$v") >>"$log" 2>&1; then
			echo "SKIP: cannot fetch $p=$v (apt-get download failed: see $log)"
			return 77
		fi
		f=$(ls "$dl/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
		if [ -z "$f" ]; then
			echo "SKIP: apt-get download $p=$v left no .deb in $dl"
			return 77
		fi
	fi
	echo "$f"
}

kdeb_version() {
	local v=""
	# What this machine has installed is bookworm's (the system's apt).
	[ ${#rel_apt[@]} -gt 0 ] ||
		v=$(dpkg-query -W -f='${Version}' "linux-image-$1" 2>/dev/null || true)
	[ -n "$v" ] || v=$(apt-cache "${rel_apt[@]}" policy "linux-image-$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }')
	if [ -z "$v" ]; then
		echo "SKIP: no version known for linux-image-$1 (apt-get update?)"
		return 77
	fi
	echo "$v"
}

kdeb_image_version() {
	local deb
	deb=$(cat "$1/kernel/.deb" 2>/dev/null) || return 0
	# linux-image-6.1.0-57-amd64_6.1.192-3_amd64.deb
	echo "$deb" | cut -d_ -f2 | sed 's/%3a/:/'
}
