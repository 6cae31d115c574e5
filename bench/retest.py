#!/usr/bin/env python3
# bench/retest.py FIRST.tsv SECOND.tsv NAME...: how well two measurements of
# the same schedules agree (the ranking a perfect model could show on them).
# Both files are bench/samples.sh output; rows are matched by name, seed and
# schedule id. Per example: Spearman of the two rounds' ratios to their
# reference, the median change of the ratio, how many changed by over 25%,
# and the spread (slowest over fastest) of the first round.
import sys, math
def load(p):
    d = {}
    for l in open(p):
        f = l.rstrip('\n').split('\t')
        if len(f) >= 10 and f[2] == 'ok':
            d[(f[0], f[1])] = (float(f[8]), f[7])
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
def rank(v):
    s = sorted(range(len(v)), key=lambda i: v[i]); r = [0]*len(v)
    for k, i in enumerate(s): r[i] = k
    return r
def sp(x, y):
    rx, ry = rank(x), rank(y); n = len(x)
    return 1 - 6*sum((p-q)**2 for p, q in zip(rx, ry))/(n*(n*n-1))
for ex in sys.argv[3:]:
    ks = [k for k in a if k[0] == ex and k in b and a[k][1] == b[k][1]]
    x = [a[k][0] for k in ks]; y = [b[k][0] for k in ks]
    big = sum(1 for p, q in zip(x, y) if max(p/q, q/p) > 1.25)
    med = sorted(abs(math.log(p/q)) for p, q in zip(x, y))[len(x)//2]
    spread = max(x)/min(x)
    print('%-12s n %3d  spearman round1 vs round2 %.3f  median |ratio change| %.1f%%  >25%%: %d  spread %.1fx' % (ex, len(ks), sp(x, y), 100*(math.exp(med)-1), big, spread))
