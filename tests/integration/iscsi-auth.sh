#!/bin/bash
# SPDX-License-Identifier: MIT
# iSCSI security: CHAP (right secret, wrong secret, wrong name, none at
# all, mutual CHAP with the right and a wrong target secret), the
# initiator-name ACL (0x0202 for others), and header and data digests
# (CRC32C) on a whole session, all through libiscsi's iscsi-inq.
. "$(dirname "$0")/../lib/daemon.sh"
requires_daemon
requires iscsi-inq
private_dir T

PORT=$(free_port)
IQN=iqn.2026-12.org.sdswarm
ALLOWED=iqn.2026-12.org.sdswarm:allowed
sed "s/^portal = .*/portal = 127.0.0.1:$PORT/" "$SDSWARM_TOP/configs/iscsi.conf" \
	>"$T/iscsi.conf"
cat >>"$T/iscsi.conf" <<EOT
chap_user = alice
chap_secret = alice-secret-0123
mutual_user = target
mutual_secret = target-secret-4567
initiators = $ALLOWED, iqn.2026-12.org.sdswarm:other
EOT
start_daemon "$T/iscsi.conf" -v || exit 1

inq() { # inq INITIATOR URL-USERINFO [URL-ARGS]
	timeout 20 iscsi-inq -i "$1" "iscsi://$2127.0.0.1:$PORT/$IQN:t0/0${3:-}" >"$T/out" 2>&1
}
refused() { ! inq "$@"; }

check "CHAP: right secret" inq "$ALLOWED" "alice%alice-secret-0123@"
check "CHAP: wrong secret refused" refused $ALLOWED alice%wrong-secret-0000@
check "CHAP: wrong name refused" refused $ALLOWED bob%alice-secret-0123@
check "CHAP: none offered refused" refused $ALLOWED ''
check "the log names authentication failure 0x0201" grep -q "status 0x0201" "$DAEMON_LOG"
check "mutual CHAP" inq "$ALLOWED" "alice%alice-secret-0123@" \
	"?target_user=target&target_password=target-secret-4567"
check "mutual CHAP: wrong target secret rejected by the initiator" \
	refused $ALLOWED alice%alice-secret-0123@ '?target_user=target&target_password=nope-nope-nope'
check "ACL: another initiator refused" \
	refused iqn.2026-12.org.sdswarm:stranger alice%alice-secret-0123@
check "the log names authorization failure 0x0202" grep -q "status 0x0202" "$DAEMON_LOG"
check "digests: CRC32C header and data" inq "$ALLOWED" "alice%alice-secret-0123@" \
	"?header_digest=crc32c&data_digest=crc32c"
check "daemon alive" daemon_alive
stop_daemon
expect_eq "sdswarmd exits 0" 0 $?
finish
