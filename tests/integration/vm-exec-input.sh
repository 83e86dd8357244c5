#!/bin/bash
# SPDX-License-Identifier: MIT
# `sdswarm-testhost exec` refuses bad input before anything boots, with exit
# status 2 and a message naming the problem: a script that is not
# executable or not there, an unknown front end, release or count, a
# target config (--config,
# --set) sdswarmd --check refuses or that sets the guest's own keys, an unknown
# Debian package or one of the other release only (apt's own answer), a
# module of the other release's kernel, and a kernel module built for
# another kernel (one of Debian's cloud kernel's modules, fetched once
# with apt-get download into build/vm/dl/other). No qemu is started: each
# answer must come without the "booting" line. Skips when QEMU or the
# kernel package cannot be had; the module check skips alone when the
# cloud kernel cannot be fetched.
. "$(dirname "$0")/../lib/common.sh"
requires qemu-system-x86_64 apt-get dpkg-deb modinfo
[ -x "$SDSWARM_PLAIN_BIN/sdnum" ] || skip "no $SDSWARM_PLAIN_BIN/sdnum: run make"
export SDSWARM_VM_BIN=$SDSWARM_PLAIN_BIN
th=$SDSWARM_TOP/testhost/sdswarm-testhost
vm=$("$th" paths vm)
t=$(tmpdir)

# The kernel the guest runs (and the build, so that the module check
# below has it); a machine without it skips.
"$th" build -q >"$t/build.log" 2>&1
rc=$?
[ $rc -eq 77 ] && skip "$(grep -m1 '^SKIP:' "$t/build.log")"
expect_eq "sdswarm-testhost build" 0 "$rc"
kver=$(cat "$vm/kernel.version")

refused() { # DESC PATTERN ARGS...: exit 2, the message, and no boot
	local desc=$1 pat=$2 out rc
	shift 2
	out=$("$th" exec "$@" 2>&1)
	rc=$?
	expect_eq "$desc: exit status" 2 "$rc"
	check "$desc: says '$pat'" grep -q -- "$pat" <<<"$out"
	check "$desc: before booting" eval '! grep -q booting <<<"$out"'
	echo "$out" | sed 's/^/  | /'
}

printf '#!/bin/sh\nexit 0\n' >"$t/noexec.sh"
chmod 0644 "$t/noexec.sh"
printf '#!/bin/sh\nexit 0\n' >"$t/ok.sh"
chmod 0755 "$t/ok.sh"
refused "a script that is not executable" "not executable" --script "$t/noexec.sh"
refused "a script that is not there" "no such file" --script "$t/missing.sh"
refused "nothing to run" "nothing to run"
refused "an unknown front end" "--frontend 'nvme'" --frontend nvme --script "$t/ok.sh"
refused "a disk count that is not one" "--disks 12x" --disks 12x --script "$t/ok.sh"
refused "too many partitions for scsi_debug" "--parts 16" --parts 16 --script "$t/ok.sh"
refused "an unknown host" "--host 'fedora'" --host fedora --script "$t/ok.sh"
refused "an unknown release" "--release 'sid': bookworm or trixie" --release sid --script "$t/ok.sh"
cp "$t/ok.sh" "$t/fake.ko"
refused "a file that is not a module" "not a kernel module" --module "$t/fake.ko" --script "$t/ok.sh"

# The user's target config (--config, --set): sdswarmd --check's own
# FILE:LINE message, with the user's file and line (not the merged copy's)
# or the --set that gave the key; scsi_debug has no sdswarmd; the keys the
# guest sets itself; --disks beside a config.
printf '[target]\nseed = 2\n[luns]\ncount = 4\nsize = 12Q\n' >"$t/bad.conf"
printf '[luns]\ncount = 4\nsize = 64M\n' >"$t/good.conf"
printf '[luns]\ncount = 2\n[iscsi]\nportal = 127.0.0.1:3261\n' >"$t/portal.conf"
refused "a config with an error" "$t/bad.conf:5: \[luns\] size = 12Q: not a size" \
	--frontend iscsi --config "$t/bad.conf" --script "$t/ok.sh"
refused "a --set with an error" "^--set luns.block_size=1000: \[luns\] block_size = 1000:" \
	--frontend tcmu --config "$t/good.conf" --set luns.block_size=1000 --script "$t/ok.sh"
refused "--config with scsi_debug" "scsi_debug has no sdswarmd" \
	--config "$t/good.conf" --script "$t/ok.sh"
refused "--set with scsi_debug" "scsi_debug has no sdswarmd" \
	--set luns.size=64M --script "$t/ok.sh"
refused "the guest's portal" "$t/portal.conf:3: \[iscsi\]: the test host sets the front end" \
	--frontend iscsi --config "$t/portal.conf" --script "$t/ok.sh"
refused "the guest's control socket" "--set target.control=/x: \[target\] control: the test host sets" \
	--frontend tcmu --set target.control=/x --script "$t/ok.sh"
refused "--disks beside --config" "with --disks: the config's \[luns\] sections are the disks" \
	--frontend tcmu --config "$t/good.conf" --disks 4 --script "$t/ok.sh"
refused "a --set that is not S.KEY=V" "--set 'size=1G': SECTION.KEY=VALUE" \
	--frontend tcmu --set size=1G --script "$t/ok.sh"

# apt's own answer for a package Debian does not have.
if apt-cache show --no-all-versions busybox-static >/dev/null 2>&1; then
	refused "an unknown package" "Unable to locate package sdswarm-no-such-package" \
		--pkgs smartmontools,sdswarm-no-such-package --script "$t/ok.sh"
	refused "an unknown package (debian host)" "no bookworm package 'sdswarm-no-such-package'" \
		--host debian --pkgs sdswarm-no-such-package --script "$t/ok.sh"
	refused "a package bookworm does not have" "Unable to locate package python3.13" \
		--pkgs python3.13 --script "$t/ok.sh"
else
	echo "SKIP (part): apt has no package lists; the unknown-package checks need them"
fi

# trixie: a package of bookworm's only (python3.11; trixie has 3.13),
# answered from trixie's private lists (for the initramfs host and the
# Debian one), and a module of the other
# release's kernel. exec builds trixie's image first: a machine that
# cannot have it skips this part.
"$th" build -q --release trixie >"$t/build-trixie.log" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	tvm=$("$th" paths --release trixie vm)
	refused "a package trixie does not have" "Unable to locate package python3.11" \
		--release trixie --pkgs python3.11 --script "$t/ok.sh"
	refused "... nor trixie's Debian host" "no trixie package 'python3.11'" \
		--release trixie --host debian --pkgs python3.11 --script "$t/ok.sh"
	tk=$(cat "$tvm/kernel.version")
	cp "$(find "$tvm/kernel/lib/modules/$tk/kernel/drivers/md" -name 'dm-zero.ko' | head -1)" \
		"$t/dm-zero-6.12.ko"
	refused "a module of trixie's kernel on bookworm" \
		"built for kernel $tk; the test host runs $kver" \
		--module "$t/dm-zero-6.12.ko" --script "$t/ok.sh"
	cp "$vm/kernel/lib/modules/$kver/kernel/drivers/md/dm-zero.ko" "$t/dm-zero-6.1.ko"
	refused "a module of bookworm's kernel on trixie" \
		"built for kernel $kver; the test host runs $tk" \
		--release trixie --module "$t/dm-zero-6.1.ko" --script "$t/ok.sh"
else
	expect_eq "testhost/build --release trixie (0, or 77 when it cannot be had)" 77 "$rc"
	echo "SKIP (part): $(grep -m1 '^SKIP:' "$t/build-trixie.log")"
fi

# A real module of another kernel: dm-zero of Debian's cloud flavour.
other=$vm/dl/other
mkdir -p "$other"
deb=$(ls "$other"/linux-image-*-cloud-amd64_*.deb 2>/dev/null | head -1)
if [ -z "$deb" ]; then
	pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	[ -n "$pkg" ] && (cd "$other" && apt-get download "$pkg" >/dev/null 2>&1)
	deb=$(ls "$other"/linux-image-*-cloud-amd64_*.deb 2>/dev/null | head -1)
fi
if [ -n "$deb" ]; then
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - --wildcards '*/kernel/drivers/md/dm-zero.ko' \
		>"$t/dm-zero.ko"
	theirs=$(modinfo -F vermagic "$t/dm-zero.ko" | cut -d' ' -f1)
	check "the cloud module is for another kernel ($theirs, the guest runs $kver)" \
		test "$theirs" != "$kver"
	refused "a module for another kernel" "built for kernel $theirs; the test host runs $kver" \
		--module "$t/dm-zero.ko" --script "$t/ok.sh"
else
	echo "SKIP (part): cannot fetch Debian's cloud kernel for a module of another kernel"
fi

# --pkgs gives what a real Debian system has: Debian's testdisk links
# libcom_err through libext2fs without declaring libcom-err2 (every
# system has it), so the closure adds the package its ELF files need.
PKGS=$SDSWARM_TOP/testhost/build-pkgs
img=$(SDSWARM_VM_DIR=$vm "$PKGS" --pkgs testdisk --force 2>"$t/pkgs.err")
rc=$?
cat "$t/pkgs.err"
if [ $rc -eq 1 ] && grep -q 'apt-get download failed' "$t/pkgs.err"; then
	echo "SKIP (part): cannot download testdisk's packages"
else
	expect_eq "build-pkgs --pkgs testdisk" 0 "$rc"
	check "it names what it added and why" \
		grep -q 'adding libcom-err2: .* needs libcom_err.so.2 and does not declare it' "$t/pkgs.err"
	check "the overlay holds libcom_err.so.2" \
		bash -c 'cpio -it --quiet <"$1" | grep -q "lib/x86_64-linux-gnu/libcom_err.so.2$"' _ "$img"
	img2=$(SDSWARM_VM_DIR=$vm "$PKGS" --pkgs testdisk 2>"$t/pkgs2.err")
	expect_eq "the second time: the same overlay, from the cache" "$img" "$img2"
	check "without adding again" grep -q '^vm-pkgs: cached:' "$t/pkgs2.err"
fi
finish
