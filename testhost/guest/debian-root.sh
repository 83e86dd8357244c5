# SPDX-License-Identifier: MIT
# vm_debian_root: sourced by the initramfs's /init on the Debian host
# (sdswarm.root=debian, `sdswarm-testhost exec --host debian`). Mounts the
# root disk (/dev/vda, ext4, the image testhost/build-debian made; qemu's
# snapshot=on throws every write away at the end), the run's share on
# /sdswarm and the kernel's module tree on /lib/modules/VERSION (both 9p),
# copies the guest side (vm-lib, the scenarios, sdswarm's programs) in,
# installs sdswarm-exec.service (it runs guest/exec-unit on the serial
# console, instead of the getty systemd would start there) and execs
# systemd through switch_root. Returns only after vm_fail.
vm_debian_root() {
	local root=/newroot kver m p
	kver=$(uname -r)
	for m in virtio_pci virtio_blk ext4 9pnet_virtio 9p; do
		vm_modprobe "$m" || return 0
	done
	vm_wait 30 test -b /dev/vda ||
		{ vm_fail "debian host: no root disk /dev/vda after 30 s"; return 0; }
	mkdir -p $root
	mount -t ext4 /dev/vda $root ||
		{ vm_fail "debian host: cannot mount /dev/vda (ext4)"; return 0; }
	[ -x $root/lib/systemd/systemd ] ||
		{ vm_fail "debian host: /dev/vda has no /lib/systemd/systemd"; return 0; }
	mkdir -p $root/sdswarm "$root/lib/modules/$kver"
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 sdswarm $root/sdswarm ||
		{ vm_fail "debian host: cannot mount the run's 9p share"; return 0; }
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro sdswarm-modules \
		"$root/lib/modules/$kver" ||
		{ vm_fail "debian host: cannot mount the module share"; return 0; }

	mkdir -p $root/usr/lib/sdswarm-vm $root/scenarios $root/usr/local/bin
	cp /usr/lib/sdswarm-vm/* $root/usr/lib/sdswarm-vm/
	cp /scenarios/*.sh $root/scenarios/
	for p in sdnum sdswarmd sdswarm sdswarm-bench; do
		[ -x /usr/bin/$p ] && cp /usr/bin/$p $root/usr/local/bin/
	done
	cat >$root/etc/systemd/system/sdswarm-exec.service <<UNIT
[Unit]
Description=sdswarm exec: the disks, then the user's script
After=systemd-udevd.service systemd-udev-trigger.service local-fs.target systemd-journald.service
Wants=systemd-udevd.service

[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=/bin/sh /usr/lib/sdswarm-vm/exec-unit
StandardInput=tty-force
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TTYReset=yes
UNIT
	mkdir -p $root/etc/systemd/system/multi-user.target.wants
	ln -sf ../sdswarm-exec.service \
		$root/etc/systemd/system/multi-user.target.wants/sdswarm-exec.service
	# The console is the unit's: no getty on it.
	ln -sf /dev/null $root/etc/systemd/system/serial-getty@ttyS0.service
	ln -sf /dev/null $root/etc/systemd/system/getty@tty1.service

	for m in /dev /proc /sys /run; do
		mount --move $m $root$m 2>/dev/null || umount -l $m 2>/dev/null
	done
	umount -l /tmp 2>/dev/null
	exec switch_root $root /lib/systemd/systemd
}
