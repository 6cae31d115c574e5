# difftest-summary.awk: summarise a differential-test report (lines
# "NAME SEED OUTCOME [REASON...]") as one row per example and the reasons
# of every failure.
{
	n[$1]++; c[$1 " " $3]++; names[$1] = 1
	if ($3 != "ok") { r = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ ?/, "", r); why[$1 " seed " $2 ": " $3 " " r] = 1 }
}
END {
	printf "%-16s %6s %6s %8s %8s %8s %8s %8s\n", "example", "drawn", "ok", "refused", "genfail", "timeout", "runfail", "differs"
	for (e in names) rows[++k] = e
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (rows[j] < rows[i]) { t = rows[i]; rows[i] = rows[j]; rows[j] = t }
	for (i = 1; i <= k; i++) {
		e = rows[i]
		printf "%-16s %6d %6d %8d %8d %8d %8d %8d\n", e, n[e], c[e " ok"], c[e " refused"], c[e " genfail"], c[e " gentimeout"], c[e " runfail"], c[e " differs"]
		tot += n[e]; ok += c[e " ok"]
	}
	printf "%-16s %6d %6d\n", "total", tot, ok
	for (w in why) print "  " w
}
