# SPDX-License-Identifier: MIT
# What a sanitizer report looks like in a log: sourced, never run. The one
# definition that tests/run.sh, the test helpers and the conformance runs
# search a log with, so a new sanitizer's marker is added in one place.
#   SDSWARM_SANITIZER_RE    an extended regex (grep -E): a line of a report
#                           from ASan, LSan, UBSan or TSan matches it
#   sanitizer_report FILE   true when FILE holds such a line (false when
#                           it has none or cannot be read)

SDSWARM_SANITIZER_RE='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer|WARNING: ThreadSanitizer'

sanitizer_report() {
	grep -qE "$SDSWARM_SANITIZER_RE" "$1" 2>/dev/null
}
