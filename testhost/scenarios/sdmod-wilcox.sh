# SPDX-License-Identifier: MIT
# vm-mem: 1G
# vm-timeout: 1200
# vm-kernel: wilcox
# sdmod-wilcox: the layout of Matthew Wilcox's 2003 mail on a real kernel,
# sdswarm's wilcox kernel (testhost/build-kernel: block/ patched by
# testhost/kernel/wilcox.patch; `sdswarm-testhost run --kernel wilcox`,
# implied by the "vm-kernel" line above). sd_mod with layout=wilcox on N scsi_debug
# disks (sdswarm.disks, default 300) with P GPT partitions each
# (sdswarm.parts, default 63): a disk keeps mainline's 16 minors, and
# partitions 16-63 carry their bits 4-5 in minor bits 18-19. The GPT is
# written once (the disks share scsi_debug's store), sd_mod is reloaded and
# every disk probed with it. Verdict, with 0 mismatches each:
#   - every disk and partition (name, dev_t, /dev node) as `sdnum --scheme
#     wilcox`, the disks exactly sdnum's 0..N-1;
#   - nothing on 259 (the extended dev_t that mainline gives partitions
#     16+);
#   - every disk below 256 (sda..sdiv) and its partitions 1-15 on the very
#     numbers 2.6.0 gave them (`sdnum --scheme legacy`): the old nodes keep
#     their meaning;
#   - every partition 16+ has a minor of 2^18 or more;
#   - control: `sdnum --scheme naive` disagrees on every name but sda and
#     sda1..sda15, so the check tells the layouts apart.
# Figures: disks, seen, parts_seen, mismatches, on_259, legacy_checked,
# legacy_mismatches, high_parts, probe_s (the reload to the last
# partition), checked, control_mismatches.
# Parameters: sdswarm.disks=N sdswarm.parts=P (1..63)
. /usr/lib/sdswarm-vm/vm-lib.sh
. /usr/lib/sdswarm-vm/sd-lib.sh

n=$(vm_param disks 300)
parts=$(vm_param parts 63)
vm_stat disks "$n"
vm_kv parts "$parts"
case $n in '' | *[!0-9]* | 0) vm_fail "sdswarm.disks=$n is not a count"; exit 0 ;; esac
[ "$n" -le 16384 ] || { vm_fail "sdswarm.disks=$n: at most 16384 (one scsi_debug target)"; exit 0; }
case $parts in '' | *[!0-9]*) vm_fail "sdswarm.parts=$parts is not a count"; exit 0 ;; esac
[ "$parts" -ge 1 ] && [ "$parts" -le 63 ] || { vm_fail "sdswarm.parts=$parts: 1..63 fit a wilcox disk"; exit 0; }
w=/tmp/sdmod-wilcox
mkdir -p $w
vm_kv_str kernel "$(uname -r)"
vm_sd_need_layout wilcox || exit 0

vm_sd_load layout=wilcox || exit 0
# 1 MiB a partition and the GPT's own: 8 MiB more than the partitions.
vm_modprobe scsi_debug add_host=1 num_tgts=1 max_luns="$n" delay=0 \
	dev_size_mb=$((parts + 8)) || exit 0
vm_sd_wait 300 "$n" || exit 0
vm_sd_gpt $w "$parts" || exit 0
vm_sd_unload || exit 0
t0=$(vm_uptime)
vm_sd_load layout=wilcox || exit 0
vm_sd_wait 900 "$n" $((n * parts)) || exit 0
vm_stat probe_s "$(vm_since "$t0")"
vm_stat seen "$(vm_sd_count)"
vm_stat parts_seen "$(vm_sd_parts)"

vm_sd_kernel $w
vm_sd_scheme_check $w wilcox 0 "$n"
on259=$(grep -c ' 259:' $w/kernel)
vm_stat on_259 "$on259"
vm_stat mismatches "$VM_SD_BAD"
vm_kv checked "$(wc -l <$w/kernel)"
vm_kv_str first "$(grep '^sda ' $w/kernel)"
vm_kv_str last_part "$(grep "^$(echo $((n - 1)) | sdnum name -)$parts " $w/kernel)"

# 2.6.0's nodes: disks 0..255 and their partitions 1-15, as legacy.
paste -d' ' $w/kernel $w/idx | awk '$3 != "error:" && $3 < 256 && $4 <= 15' >$w/old
cut -d' ' -f3,4 $w/old | sdnum --scheme legacy devt - >$w/legacy 2>&1
legacy_bad=$(paste -d' ' $w/old $w/legacy | awk '$2 != $5 { c++; if (c <= 3) print "sdswarm-vm: legacy node " $1 ": kernel " $2 ", 2.6 " $5 >"/dev/stderr" } END { print c + 0 }')
legacy_n=$(wc -l <$w/old)
vm_stat legacy_checked "$legacy_n"
vm_stat legacy_mismatches "$legacy_bad"
want_old=$(awk -v n="$n" -v p="$parts" 'BEGIN { d = n < 256 ? n : 256; print d * (1 + (p < 15 ? p : 15)) }')
[ "$legacy_n" -eq "$want_old" ] || vm_fail "$legacy_n disks and partitions in 2.6's range, want $want_old"
[ "$legacy_bad" -eq 0 ] || vm_fail "$legacy_bad of 2.6's nodes moved under layout wilcox"

# Partitions 16 and up: minor bits 18-19 set.
high=$(paste -d' ' $w/kernel $w/idx | awk '$4 >= 16' | wc -l)
high_ok=$(paste -d' ' $w/kernel $w/idx | awk '$4 >= 16 { split($2, d, ":"); if (d[2] >= 262144) c++ } END { print c + 0 }')
vm_stat high_parts "$high"
want_high=$(( parts > 15 ? n * (parts - 15) : 0 ))
[ "$high" -eq "$want_high" ] || vm_fail "$high partitions 16+, want $want_high"
[ "$high_ok" -eq "$high" ] || vm_fail "$((high - high_ok)) partitions 16+ below minor 2^18"

# Control: the naive layout's numbers agree only on sda and sda1..sda15.
sed 's/^error.*/0 0/' $w/idx | sdnum --scheme naive devt - >$w/naive
control=$(paste -d' ' $w/kernel $w/naive | awk '$2 != $3 { c++ } END { print c + 0 }')
vm_kv control_mismatches "$control"
want_control=$(awk '!($1 == 0 && $2 < 16) { c++ } END { print c + 0 }' $w/idx)
[ "$control" -eq "$want_control" ] ||
	vm_fail "control: scheme naive disagreed on $control names, not $want_control; the check cannot tell the layouts apart"
[ "$on259" -eq 0 ] || vm_fail "$on259 partitions on major 259 under layout wilcox"
if [ "$VM_SD_BAD" -gt 0 ]; then
	vm_fail "$VM_SD_BAD mismatch(es) against sdnum --scheme wilcox, first: $(head -1 $w/mismatches)"
fi
vm_pass "layout wilcox: $(wc -l <$w/kernel) disks and partitions as sdnum --scheme wilcox, none on 259, $legacy_n 2.6 nodes unchanged"
