# SPDX-License-Identifier: MIT
# The shared helper of the integration scripts that run sdswarmd with its
# FUSE front end: sourced, never run. Sources daemon.sh (start_daemon and
# the rest).
#   requires_fuse [CMD...]  skip (77) unless sdswarmd and sdswarm are built,
#                        fusermount3 and every CMD are installed and this
#                        machine has /dev/fuse
#   fuse_mountpoint DIR  make DIR the mount point: sets MNT, creates it, and
#                        at exit unmounts it if it is still a FUSE mount
#                        (fuse_unmount)
#   fuse_unmount         unmount $MNT if it is still a FUSE mount
#                        (fusermount3 -u, else umount -l), saying so
#   fuse_daemon CONFIG [ARGS...]
#                        start_daemon CONFIG ARGS --fuse $MNT; true once
#                        $MNT is a FUSE mount. Skips (77) when this machine
#                        refuses the mount (no permission, no /dev/fuse);
#                        any other failure counts one and returns 1
#   is_mounted DIR       true while DIR is a FUSE mount point
. "$(dirname "${BASH_SOURCE[0]}")/daemon.sh"

MNT=

requires_fuse() {
	requires_daemon
	requires fusermount3 "$@"
	[ -c /dev/fuse ] || skip "no /dev/fuse on this machine"
}

is_mounted() {
	awk -v m="$1" '$2 == m && $3 ~ /^fuse/ { f = 1 } END { exit !f }' /proc/self/mounts
}

fuse_unmount() {
	if [ -n "$MNT" ] && is_mounted "$MNT"; then
		echo "cleanup: $MNT still mounted; unmounting it"
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	return 0
}

fuse_mountpoint() {
	MNT=$1
	mkdir -p "$MNT" || return 1
	on_exit fuse_unmount
}

fuse_daemon() {
	if start_daemon "$@" --fuse "$MNT"; then
		is_mounted "$MNT" && return 0
		fail "the daemon runs but $MNT is not a FUSE mount"
		return 1
	fi
	if grep -qiE 'cannot mount.*(not permitted|permission denied)|/dev/fuse:' "$DAEMON_LOG"; then
		skip "cannot mount FUSE here: $(grep -m1 -i 'fuse' "$DAEMON_LOG")"
	fi
	fail "the daemon did not start with --fuse"
	return 1
}
