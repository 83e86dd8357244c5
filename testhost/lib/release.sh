# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # rel_apt is its callers'
# The Debian releases the test host boots, and where apt finds each one's
# packages. Sourced, never run. bookworm (Debian 12, kernel 6.1) is this
# machine's own release: its packages come through the system's apt
# configuration, as they always did. trixie (Debian 13, kernel 6.12) comes
# through a private one under the release's cache folder (RELDIR/apt): a
# deb822 sources file, package lists and apt's cache of its own, and an
# empty dpkg status, so /etc/apt is never touched and the system's own
# package state never mixes with trixie's.
#
#   rel_names                     the releases, one line
#   rel_check NAME                0 when NAME is a release, else 1
#   rel_kernel RELEASE            its kernel series: 6.1, 6.12
#   rel_vm_dir CACHE RELEASE      its default image folder: CACHE/vm
#                                 (bookworm's, as before releases),
#                                 CACHE/vm-trixie (CACHE: the checkout's
#                                 build/ or ~/.cache/sdswarm, host.sh's
#                                 th_cache)
#   rel_apt_opts RELEASE RELDIR   sets rel_apt, apt-get's and apt-cache's
#                                 options for RELEASE (none for bookworm);
#                                 writes RELDIR/apt/sources/RELEASE.sources
#   rel_apt_update RELEASE RELDIR LOG
#                                 the private package lists, fetched when
#                                 there are none or they are a week old
#                                 (bounded: 120 s); 0 when there are lists
#
# SDSWARM_VM_MIRROR names another Debian mirror for the private sources
# (default http://deb.debian.org/debian).

rel_names() { echo "bookworm trixie"; }

rel_check() {
	case $1 in bookworm | trixie) return 0 ;; esac
	return 1
}

rel_kernel() {
	case $1 in
	bookworm) echo 6.1 ;;
	trixie) echo 6.12 ;;
	esac
}

rel_vm_dir() {
	if [ "$2" = bookworm ]; then
		echo "$1/vm"
	else
		echo "$1/vm-$2"
	fi
}

rel_apt=()

rel_apt_opts() {
	local rel=$1 a=$2/apt
	rel_apt=()
	[ "$rel" = bookworm ] && return 0
	mkdir -p "$a/sources" "$a/lists/partial" "$a/cache/archives/partial"
	# apt takes a relative Dir:: as relative to /etc/apt.
	a=$(cd "$a" && pwd)
	# Main only: the kernel and the packages the guest takes are there;
	# a point release moves trixie's kernel forward (rel_apt_update).
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"${SDSWARM_VM_MIRROR:-http://deb.debian.org/debian}" "$rel" \
		/usr/share/keyrings/debian-archive-keyring.gpg >"$a/sources/$rel.sources.new"
	if cmp -s "$a/sources/$rel.sources.new" "$a/sources/$rel.sources"; then
		rm -f "$a/sources/$rel.sources.new"
	else
		mv "$a/sources/$rel.sources.new" "$a/sources/$rel.sources"
	fi
	# SourceList /dev/null and SourceParts ours: the system's sources are
	# not read. Status /dev/null: nothing counts as installed. The
	# system's apt.conf.d (a proxy, say) still applies; where it turns
	# apt's binary package cache off (as docker-clean does), ours is
	# named: without it every apt-cache call parses the lists anew
	# (1.2 s instead of 0.25 s).
	rel_apt=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$a/sources"
		-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache"
		-o "Dir::Cache::pkgcache=$a/cache/pkgcache.bin"
		-o "Dir::Cache::srcpkgcache=$a/cache/srcpkgcache.bin"
		-o Dir::State::status=/dev/null -o Dir::Etc::Preferences=/dev/null
		-o Dir::Etc::PreferencesParts=/dev/null)
}

rel_apt_update() {
	local rel=$1 a=$2/apt log=$3 have
	[ "$rel" = bookworm ] && return 0
	have=$(find "$a/lists" -maxdepth 1 -name '*_Packages*' -mtime -7 2>/dev/null | head -1)
	[ -z "$have" ] || return 0
	mkdir -p "$(dirname "$log")"
	timeout 120 apt-get "${rel_apt[@]}" -q update >>"$log" 2>&1
	# Lists from before still serve when the mirror cannot be reached.
	[ -n "$(find "$a/lists" -maxdepth 1 -name '*_Packages*' 2>/dev/null | head -1)" ]
}
