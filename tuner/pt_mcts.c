/* pt_mcts.c: ProTuner's ensemble of Monte Carlo tree searches
 * (doc/search.md).
 *
 * Each tree is a pool of nodes addressed by index, with two state slots
 * per node: the node's own (partial) state and the complete state of the
 * best simulation started at it. A node keeps its visits, the sums of its
 * simulations' relative costs and inverse costs (for the selection
 * formulas), and the best complete cost in its subtree with the node whose
 * slot holds that state. Trees never share memory: in a round, each is
 * worked by one thread, so the rounds need no locks and their results do
 * not depend on the number of threads.
 */
#include "pt_search_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define RANDOM_TRIES 8
#define REL_CAP 1e3     /* relative costs (and invalid ones) are capped */

struct node {
	uint32_t parent, child, next;  /* next: sibling, or the free list */
	uint32_t nchildren;
	int32_t total;                 /* children in all, -1 not counted */
	uint32_t best_node;            /* whose slot holds the best state */
	uint64_t hash;                 /* of its own state */
	double visits, sum, sum_inv;
	double best;                   /* best complete cost in the subtree */
	double own;                    /* cost of the state in its slot */
};

struct tree {
	int greedy;
	uint64_t rng;
	struct node *n;
	unsigned char *states;  /* 2 * cap states */
	uint32_t cap, used, free_list, root, max;
	double cref;            /* cost of its first simulation */
	long sims;
	double busy;            /* seconds worked this round */
};

struct mcts {
	struct ps_run *r;
	struct tree *t;
	int ntrees;
	double cp;
	long iterations;        /* per tree this round, 0: until deadline */
	double round_end;
};

static struct pt_space_state *nstate(struct mcts *mc, struct tree *t,
				     uint32_t i, int slot)
{
	return (struct pt_space_state *)(t->states +
					 (2 * (size_t)i + (size_t)slot) *
					 mc->r->ssz);
}

/* A fresh node, or NIL when the tree is at its cap (or out of memory:
 * the tree then simply stops growing, like at its cap). */
static uint32_t node_new(struct mcts *mc, struct tree *t, uint32_t parent)
{
	uint32_t i;
	struct node *nd;

	if (t->free_list != NIL) {
		i = t->free_list;
		t->free_list = t->n[i].next;
	} else {
		if (t->used == t->max)
			return NIL;
		if (t->used == t->cap) {
			uint32_t c = t->cap ? 2 * t->cap : 256;
			struct node *nn;
			unsigned char *ns;

			if (c > t->max)
				c = t->max;
			nn = realloc(t->n, (size_t)c * sizeof(*nn));
			if (!nn)
				return NIL;
			t->n = nn;
			ns = realloc(t->states, 2 * (size_t)c * mc->r->ssz);
			if (!ns)
				return NIL;
			t->states = ns;
			t->cap = c;
		}
		i = t->used++;
	}
	nd = &t->n[i];
	memset(nd, 0, sizeof(*nd));
	nd->parent = parent;
	nd->child = nd->next = NIL;
	nd->total = -1;
	nd->best_node = NIL;
	nd->best = nd->own = PT_SEARCH_INVALID;
	if (parent != NIL) {
		nd->next = t->n[parent].child;
		t->n[parent].child = i;
		t->n[parent].nchildren++;
	}
	return i;
}

/* Return node i and its subtree to the free list. */
static void subtree_free(struct tree *t, uint32_t i)
{
	uint32_t stack_top = i, cur;

	/* The free list doubles as the work list: a node's children are
	 * pushed before the node itself goes on the free list. */
	t->n[i].next = NIL;
	while (stack_top != NIL) {
		uint32_t c;

		cur = stack_top;
		stack_top = t->n[cur].next;
		for (c = t->n[cur].child; c != NIL;) {
			uint32_t nx = t->n[c].next;

			t->n[c].next = stack_top;
			stack_top = c;
			c = nx;
		}
		t->n[cur].child = NIL;
		t->n[cur].next = t->free_list;
		t->free_list = cur;
	}
}

static double rel(const struct tree *t, double c)
{
	double x = c / t->cref;

	return x < 1 / REL_CAP ? 1 / REL_CAP : x < REL_CAP ? x : REL_CAP;
}

/* Record a simulation's cost c from node `from`, whose slot holds the
 * complete state (best at `bn`), up to the root. */
static void backprop(struct tree *t, uint32_t from, double c, uint32_t bn)
{
	double x = rel(t, c);
	uint32_t i;

	for (i = from; i != NIL; i = t->n[i].parent) {
		struct node *nd = &t->n[i];

		nd->visits += 1;
		nd->sum += x;
		nd->sum_inv += 1 / x;
		if (c < nd->best) {
			nd->best = c;
			nd->best_node = bn;
		}
	}
}

static double score(const struct mcts *mc, const struct node *p,
		    const struct node *c)
{
	double lnn = log(p->visits > 1 ? p->visits : 1);

	if (mc->r->o->formula == PT_MCTS_SQRT2)
		return c->sum_inv / c->visits +
		       mc->cp * sqrt(2 * lnn / c->visits);
	return c->visits / c->sum * (1 + mc->cp * sqrt(lnn / c->visits));
}

struct dup_ctx {
	struct mcts *mc;
	struct tree *t;
	uint32_t v;
	long target;         /* pick the target-th new child (from 0) */
	long fresh;          /* new children seen */
	struct pt_space_state *out;
};

static int is_child(struct mcts *mc, struct tree *t, uint32_t v,
		    const struct pt_space_state *st, uint64_t h)
{
	uint32_t c;

	for (c = t->n[v].child; c != NIL; c = t->n[c].next)
		if (t->n[c].hash == h &&
		    !memcmp(nstate(mc, t, c, 0), st, mc->r->ssz))
			return 1;
	return 0;
}

static int count_fresh(void *arg, const struct pt_space_state *child)
{
	struct dup_ctx *d = arg;

	if (is_child(d->mc, d->t, d->v, child,
		     ps_hash(child, d->mc->r->ssz)))
		return 0;
	if (d->fresh++ == d->target && d->out)
		memcpy(d->out, child, d->mc->r->ssz);
	return 0;
}

/* Draw a child of v that is not in the tree yet into `out`: random draws
 * first (the space builds only the drawn one); when they keep hitting
 * known children, the children are enumerated and one of the new ones
 * picked at random. 1 when found, 0 when v has no new child (its count
 * is then corrected), or a negative PT_E*. */
static int draw_new(struct mcts *mc, struct tree *t, struct ps_thread *th,
		    uint32_t v, struct pt_space_state *out)
{
	const struct pt_space *sp = mc->r->sp;
	struct dup_ctx d;
	int k, ret;

	for (k = 0; k < RANDOM_TRIES; k++) {
		if ((ret = pt_space_random_child(sp, nstate(mc, t, v, 0),
						 th->w, &t->rng, out)))
			return ret;
		if (!is_child(mc, t, v, out, ps_hash(out, mc->r->ssz)))
			return 1;
	}
	d.mc = mc;
	d.t = t;
	d.v = v;
	d.fresh = 0;
	d.target = -1;
	d.out = NULL;
	if ((ret = pt_space_children(sp, nstate(mc, t, v, 0), th->w,
				     count_fresh, &d)) < 0)
		return ret;
	if (!d.fresh) {
		t->n[v].total = (int32_t)t->n[v].nchildren;
		return 0;
	}
	d.target = (long)(pt_space_rand(&t->rng) % (uint64_t)d.fresh);
	d.fresh = 0;
	d.out = out;
	if ((ret = pt_space_children(sp, nstate(mc, t, v, 0), th->w,
				     count_fresh, &d)) < 0)
		return ret;
	return 1;
}

/* Greedy completion: the cheapest child at every step. */
static int greedy_complete(struct mcts *mc, int ti, struct ps_thread *th,
			   const struct pt_space_state *from,
			   struct pt_space_state *out)
{
	struct ps_run *r = mc->r;
	int ret;

	memcpy(out, from, r->ssz);
	while (!pt_space_complete(r->sp, out)) {
		ret = r->guide ? pt_space_guided_child(r->sp, r->guide, out,
						       th->w, out) : 0;
		if (ret < 0)
			return ret;
		if (!ret && (ret = ps_cheapest(mc->r, ti, th, out, out)))
			return ret;
	}
	return 0;
}

/* Simulate from state `from` (node v's own, or a child of v that the
 * pool had no room for); the result goes into v's slot when it beats what
 * the slot holds; back-propagate from v. */
static int simulate_from(struct mcts *mc, struct tree *t, int ti,
			 struct ps_thread *th, uint32_t v,
			 const struct pt_space_state *from)
{
	struct ps_run *r = mc->r;
	struct pt_space_state *out = th->tmp2;
	double c;
	int ret;

	if (t->greedy)
		ret = greedy_complete(mc, ti, th, from, out);
	else if (r->guide)
		ret = pt_space_guided_complete(r->sp, r->guide, from, th->w,
					       &t->rng, out);
	else
		ret = pt_space_random_complete(r->sp, from, th->w, &t->rng,
					       out);
	if (ret || (ret = ps_cost(r, ti, out, &c)))
		return ret;
	t->sims++;
	if (t->cref <= 0)
		t->cref = c < PT_SEARCH_INVALID && c > 0 ? c : 1;
	if (c < t->n[v].own) {
		t->n[v].own = c;
		memcpy(nstate(mc, t, v, 1), out, r->ssz);
		backprop(t, v, c, v);
	} else {
		backprop(t, v, c, NIL);
	}
	return 0;
}

static int simulate(struct mcts *mc, struct tree *t, int ti,
		    struct ps_thread *th, uint32_t v)
{
	return simulate_from(mc, t, ti, th, v, nstate(mc, t, v, 0));
}

static int expandable(const struct mcts *mc, const struct node *nd)
{
	double w = mc->r->o->widen;

	if (nd->total >= 0 && nd->nchildren >= (uint32_t)nd->total)
		return 0;
	if (w > 0 && nd->nchildren >= 1 &&
	    (double)nd->nchildren >= ceil(pow(nd->visits, w)))
		return 0;
	return 1;
}

/* Warm start: give node v (no children yet) its first child, the one
 * taking v's fixed decision (then its only child) or the warm path's
 * next state, which starts with the warm state as its best. 1 when a
 * child was added (and simulated or seeded), 0 when neither applies, or
 * a negative PT_E*. */
static int warm_child(struct mcts *mc, struct tree *t, int ti,
		      struct ps_thread *th, uint32_t v)
{
	struct ps_run *r = mc->r;
	const struct pt_space_state *st = nstate(mc, t, v, 0), *next;
	int fixed = 0, ret;
	uint32_t k;

	if (r->guide) {
		if ((ret = pt_space_guided_child(r->sp, r->guide, st, th->w,
						 th->tmp)) < 0)
			return ret;
		fixed = ret;
	}
	next = ps_warm_next(r, st);
	if (!fixed) {
		if (!next)
			return 0;
		memcpy(th->tmp, next, r->ssz);
	}
	if ((k = node_new(mc, t, v)) == NIL)
		return 0;
	if (fixed)
		t->n[v].total = 1;
	memcpy(nstate(mc, t, k, 0), th->tmp, r->ssz);
	t->n[k].hash = ps_hash(th->tmp, r->ssz);
	if (next && !memcmp(next, th->tmp, r->ssz) &&
	    r->warm_cost < PT_SEARCH_INVALID) {
		/* On the path: its best is the warm state, as if simulated. */
		t->n[k].own = r->warm_cost;
		memcpy(nstate(mc, t, k, 1), r->warm_path +
		       (size_t)(r->warm_n - 1) * r->ssz, r->ssz);
		if (t->cref <= 0)
			t->cref = r->warm_cost > 0 ? r->warm_cost : 1;
		backprop(t, k, r->warm_cost, k);
		return 1;
	}
	return (ret = simulate(mc, t, ti, th, k)) ? ret : 1;
}

/* One iteration: select, expand one child, simulate, back-propagate. */
static int iterate(struct mcts *mc, struct tree *t, int ti,
		   struct ps_thread *th)
{
	struct ps_run *r = mc->r;
	uint32_t v = t->root;
	int ret;

	for (;;) {
		struct node *nd = &t->n[v];
		uint32_t c, bc = NIL;
		double bs = -INFINITY;

		if (pt_space_complete(r->sp, nstate(mc, t, v, 0))) {
			/* A terminal: its cost is known. */
			if (nd->own >= PT_SEARCH_INVALID) {
				double cost;

				if ((ret = ps_cost(r, ti, nstate(mc, t, v, 0),
						   &cost)))
					return ret;
				t->sims++;
				if (t->cref <= 0)
					t->cref = cost < PT_SEARCH_INVALID &&
						cost > 0 ? cost : 1;
				nd->own = cost;
				memcpy(nstate(mc, t, v, 1),
				       nstate(mc, t, v, 0), r->ssz);
			}
			backprop(t, v, nd->own, v);
			return 0;
		}
		if (nd->total < 0) {
			int n = pt_space_children(r->sp, nstate(mc, t, v, 0),
						  th->w, NULL, NULL);

			if (n < 0)
				return n;
			t->n[v].total = n;
		}
		if (expandable(mc, &t->n[v])) {
			uint32_t k;

			/* Warm start: a node's first child takes the fixed
			 * decision (its only child then), or the warm path's
			 * next state. */
			if (r->warm_path && !t->n[v].nchildren &&
			    (ret = warm_child(mc, t, ti, th, v)))
				return ret < 0 ? ret : 0;
			/* A greedy tree's first child of a node is its
			 * cheapest, so that the tree holds the purely greedy
			 * path; later ones are drawn at random. */
			if (t->greedy && !t->n[v].nchildren)
				ret = (ret = ps_cheapest(mc->r, ti, th,
							    nstate(mc, t, v, 0),
							    th->tmp)) ? ret : 1;
			else
				ret = draw_new(mc, t, th, v, th->tmp);
			if (ret < 0)
				return ret;
			if (ret == 1) {
				k = node_new(mc, t, v);
				if (k == NIL)
					/* The pool is full: simulate from
					 * the drawn child without keeping
					 * it. */
					return simulate_from(mc, t, ti, th, v,
							     th->tmp);
				memcpy(nstate(mc, t, k, 0), th->tmp, r->ssz);
				t->n[k].hash = ps_hash(th->tmp, r->ssz);
				return simulate(mc, t, ti, th, k);
			}
			/* v had no new child after all (its count is now
			 * exact): select among its children. */
		}
		nd = &t->n[v];
		for (c = nd->child; c != NIL; c = t->n[c].next) {
			double s = score(mc, nd, &t->n[c]);

			if (s > bs) {
				bs = s;
				bc = c;
			}
		}
		if (bc == NIL)
			return simulate(mc, t, ti, th, v);
		v = bc;
	}
}

static int round_thread(void *ctx, int ti)
{
	struct mcts *mc = ctx;
	struct ps_run *r = mc->r;
	struct ps_thread *th = &r->th[ti];
	long it;
	int k, ret;

	/* Thread 0 is pt_search()'s caller: it keeps the progress reports
	 * (the server's heartbeats) coming during long rounds. */
	if (mc->iterations > 0) {
		for (k = ti; k < mc->ntrees; k += r->threads)
			for (it = 0; it < mc->iterations; it++)
				if ((ret = iterate(mc, &mc->t[k], ti, th)) ||
				    (!ti && (ret = ps_tick(r))))
					return ret;
		return 0;
	}
	/* Until the round's end, the tree that has worked least this round
	 * runs the next iteration, so every tree gets an equal share of the
	 * thread's time, as if each had a core of its own (ProTuner's
	 * layout): a greedy simulation costs many random ones. Each tree
	 * runs at least once. */
	for (k = ti; k < mc->ntrees; k += r->threads)
		mc->t[k].busy = 0;
	for (;;) {
		struct tree *t = NULL;
		double t0 = ps_now();

		for (k = ti; k < mc->ntrees; k += r->threads)
			if (!t || mc->t[k].busy < t->busy)
				t = &mc->t[k];
		if (t->busy > 0 && t0 >= mc->round_end)
			return 0;
		if ((ret = iterate(mc, t, ti, th)) ||
		    (!ti && (ret = ps_tick(r))))
			return ret;
		t->busy += ps_now() - t0 + 1e-9;
	}
}

/* The root's child with the best complete cost (ties: the first), NIL
 * when the root has none. */
static uint32_t best_child(const struct tree *t)
{
	uint32_t c, b = NIL;

	for (c = t->n[t->root].child; c != NIL; c = t->n[c].next)
		if (t->n[c].best < PT_SEARCH_INVALID &&
		    (b == NIL || t->n[c].best < t->n[b].best))
			b = c;
	return b;
}

/* Move tree t's root to `st`: its child of that state when there is one
 * (the subtree is kept), else a fresh root. */
static int reroot(struct mcts *mc, struct tree *t,
		  const struct pt_space_state *st, uint64_t h)
{
	uint32_t c, keep = NIL, old = t->root;

	for (c = t->n[old].child; c != NIL; c = t->n[c].next)
		if (t->n[c].hash == h &&
		    !memcmp(nstate(mc, t, c, 0), st, mc->r->ssz))
			keep = c;
	if (keep != NIL) {
		/* Detach the kept child, then free the rest. */
		uint32_t *pp = &t->n[old].child;

		while (*pp != keep)
			pp = &t->n[*pp].next;
		*pp = t->n[keep].next;
		t->n[keep].next = NIL;
		t->n[keep].parent = NIL;
		subtree_free(t, old);
		t->root = keep;
		return 0;
	}
	subtree_free(t, old);
	if ((t->root = node_new(mc, t, NIL)) == NIL)
		return PT_ENOMEM;
	memcpy(nstate(mc, t, t->root, 0), st, mc->r->ssz);
	t->n[t->root].hash = h;
	return 0;
}

struct prop {
	int tree;
	uint32_t node;
	double cost;
	const struct pt_space_state *child, *best;
	uint64_t h;
};

/* cost+real: measure the best complete states of the distinct proposed
 * children (the `top` cheapest) and return the proposal whose state ran
 * fastest, or -1 to decide by cost. */
static int pick_measured(struct mcts *mc, struct prop *p, int np, int top,
			 int *pick)
{
	struct ps_run *r = mc->r;
	const struct pt_space_state **st;
	double *cost, *ms, bms = INFINITY;
	int *who, i, k, nd = 0, ret;

	*pick = -1;
	st = malloc((size_t)np * sizeof(*st));
	cost = malloc((size_t)np * sizeof(*cost));
	ms = malloc((size_t)np * sizeof(*ms));
	who = malloc((size_t)np * sizeof(*who));
	if (!st || !cost || !ms || !who) {
		ret = PT_ENOMEM;
		goto out;
	}
	/* p is sorted by cost: the first proposal of each distinct child is
	 * its best. */
	for (i = 0; i < np && nd < top; i++) {
		for (k = 0; k < i; k++)
			if (p[k].h == p[i].h &&
			    !memcmp(p[k].child, p[i].child, r->ssz))
				break;
		if (k < i)
			continue;
		st[nd] = p[i].best;
		cost[nd] = p[i].cost;
		who[nd++] = i;
	}
	ret = 0;
	if (nd < 2)
		goto out;
	if ((ret = ps_measure(r, st, cost, nd, ms)))
		goto out;
	for (i = 0; i < nd; i++)
		if (ms[i] >= 0 && ms[i] < bms) {
			bms = ms[i];
			*pick = who[i];
		}
out:
	free(st);
	free(cost);
	free(ms);
	free(who);
	return ret;
}

static int by_prop_cost(const void *a, const void *b)
{
	const struct prop *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->tree - y->tree;
}

/* Every tree moves to state st (copied first: rerooting frees the tree
 * memory st may point into); one decision taken. */
static int move_all(struct mcts *mc, const struct pt_space_state *st)
{
	struct ps_run *r = mc->r;
	uint64_t h;
	int i, ret;

	memcpy(r->th[0].tmp, st, r->ssz);
	h = ps_hash(r->th[0].tmp, r->ssz);
	for (i = 0; i < mc->ntrees; i++)
		if ((ret = reroot(mc, &mc->t[i], r->th[0].tmp, h)))
			return ret;
	r->decisions++;
	return 0;
}

/* Decide: the trees' best root children, the winner, every tree moved
 * to it. 1 when a decision was taken, 0 when no tree had a child. */
static int decide(struct mcts *mc)
{
	struct ps_run *r = mc->r;
	struct prop *p = malloc((size_t)mc->ntrees * sizeof(*p));
	int i, np = 0, pick = 0, ret = 0;

	if (!p)
		return PT_ENOMEM;
	for (i = 0; i < mc->ntrees; i++) {
		struct tree *t = &mc->t[i];
		uint32_t b = best_child(t);

		if (t->n[t->root].best_node != NIL &&
		    (ret = ps_offer(r, nstate(mc, t, t->n[t->root].best_node,
					      1), t->n[t->root].best)))
			goto out;
		if (b == NIL)
			continue;
		p[np].tree = i;
		p[np].node = b;
		p[np].cost = t->n[b].best;
		p[np].child = nstate(mc, t, b, 0);
		p[np].best = nstate(mc, t, t->n[b].best_node, 1);
		p[np].h = t->n[b].hash;
		np++;
	}
	if (!np)
		goto out;
	qsort(p, (size_t)np, sizeof(*p), by_prop_cost);
	for (i = 0; i < np; i++)
		if ((ret = ps_offer(r, p[i].best, p[i].cost)))
			goto out;
	if (r->o->measure) {
		int top = r->o->measure_top > 0 ? r->o->measure_top : 4;

		if ((ret = pick_measured(mc, p, np, top, &pick)))
			goto out;
		if (pick < 0)
			pick = 0;
	}
	if (!(ret = move_all(mc, p[pick].child)))
		ret = 1;
out:
	free(p);
	return ret;
}

static void trees_free(struct mcts *mc)
{
	int i;

	for (i = 0; i < mc->ntrees; i++) {
		free(mc->t[i].n);
		free(mc->t[i].states);
	}
	free(mc->t);
}

/* The round's length: the time left spread over the decisions left (the
 * best complete state's depth tells how many), capped by decision_s. */
static double round_time(struct mcts *mc, const struct pt_space_state *root)
{
	struct ps_run *r = mc->r;
	double left = r->deadline - ps_now(), n;

	n = pt_space_depth(r->sp, r->best) - pt_space_depth(r->sp, root);
	if (r->warm_open) {
		/* Warm start: only the open decisions take time. */
		int d = pt_space_depth(r->sp, root);

		n = r->warm_open[d < r->warm_n ? d : r->warm_n - 1];
	}
	if (n < 1)
		n = 1;
	left /= n;
	if (r->o->decision_s > 0 && left > r->o->decision_s)
		left = r->o->decision_s;
	return left > 0 ? left : 0;
}

int ps_mcts(struct ps_run *r, struct pt_error *err)
{
	const struct pt_search_opts *o = r->o;
	struct mcts mc;
	size_t max = o->max_nodes ? o->max_nodes : 20000;
	int i, ret = 0;

	(void)err;
	memset(&mc, 0, sizeof(mc));
	mc.r = r;
	mc.ntrees = o->trees + o->greedy_trees;
	mc.iterations = o->iterations;
	mc.cp = o->cp > 0 ? o->cp :
		o->formula == PT_MCTS_CP10 ? 10 :
		o->formula == PT_MCTS_SQRT2 ? sqrt(2.0) : 1;
	if (max < 2)
		max = 2;
	if (max > UINT32_MAX - 1)
		max = UINT32_MAX - 1;
	if (!(mc.t = calloc((size_t)mc.ntrees, sizeof(*mc.t))))
		return PT_ENOMEM;
	for (i = 0; i < mc.ntrees; i++) {
		struct tree *t = &mc.t[i];
		uint64_t s = o->seed + 0x632be59bd9b4e019ull * (uint64_t)(i + 1);

		/* The greedy trees come first: tree 0 is greedy by default. */
		t->greedy = i < o->greedy_trees;
		t->rng = pt_space_rand(&s);
		t->free_list = NIL;
		t->max = (uint32_t)max;
		if ((t->root = node_new(&mc, t, NIL)) == NIL) {
			ret = PT_ENOMEM;
			goto out;
		}
		if ((ret = pt_space_root(r->sp, r->th[0].w,
					 nstate(&mc, t, t->root, 0))))
			goto out;
		t->n[t->root].hash = ps_hash(nstate(&mc, t, t->root, 0),
					     r->ssz);
	}
	for (;;) {
		struct tree *t0 = &mc.t[0];
		const struct pt_space_state *root = nstate(&mc, t0, t0->root,
							   0);
		long sims = 0;

		if (pt_space_complete(r->sp, root)) {
			double c;

			if ((ret = ps_cost(r, 0, root, &c)) ||
			    (ret = ps_offer(r, root, c)))
				goto out;
			break;
		}
		if (ps_now() >= r->deadline) {
			r->out_of_time = 1;
			break;
		}
		/* Warm start: a fixed decision is taken without a round. */
		if (r->guide) {
			ret = pt_space_guided_child(r->sp, r->guide, root,
						    r->th[0].w, r->th[0].tmp2);
			if (ret < 0)
				goto out;
			if (ret) {
				if ((ret = move_all(&mc, r->th[0].tmp2)) ||
				    (ret = ps_tick(r)))
					goto out;
				continue;
			}
		}
		mc.round_end = ps_now() + round_time(&mc, root);
		if (mc.round_end > r->deadline)
			mc.round_end = r->deadline;
		if ((ret = ps_parallel(r->threads, round_thread, &mc)))
			goto out;
		for (i = 0; i < mc.ntrees; i++) {
			sims += mc.t[i].sims;
			mc.t[i].sims = 0;
		}
		r->simulations += sims;
		if ((ret = decide(&mc)) < 0)
			goto out;
		if (!ret)
			break;  /* no tree has a child to move to */
		if ((ret = ps_progress(r)))
			goto out;
	}
	/* Measured runs: the final state is measured too. */
	if (o->measure && r->best && ps_now() < r->deadline) {
		const struct pt_space_state *st = r->best;
		double ms;

		if ((ret = ps_measure(r, &st, &r->best_cost, 1, &ms)))
			goto out;
	}
out:
	for (i = 0; i < mc.ntrees; i++)
		r->nodes += mc.t[i].used;
	trees_free(&mc);
	return ret;
}
