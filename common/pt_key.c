/* pt_key.c: the model key and the stage hashes, XXH3-128 over the hashed
 * form of the model text (doc/model-format.md, "The key"). */
#include "protune/pt_model.h"
#include "pt_text.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static void hash_buf(const struct pt_strbuf *sb, uint8_t out[16])
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits(sb->buf, sb->len));
	memcpy(out, c.digest, 16);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The producers a stage reads, each once: Func f as f, input i as
 * nfuncs + i, sorted (so Funcs by index come before inputs). */
static int producers(const struct pt_model *m, const struct pt_stage *s,
		     int *ids)
{
	int i, n = 0;

	for (i = 0; i < s->naccesses; i++) {
		const struct pt_access *a = &s->accesses[i];

		ids[n++] = a->kind == PT_ACCESS_FUNC ? a->producer :
			   m->nfuncs + a->producer;
	}
	if (n > 1)
		qsort(ids, (size_t)n, sizeof(*ids), cmp_int);
	for (i = 1; i < n; i++)
		if (ids[i] == ids[i - 1])
			ids[i - 1] = -1;
	return n;
}

static int hash_stage(struct pt_model *m, struct pt_stage *s, int *ids,
		      struct pt_strbuf *sb)
{
	const struct pt_func *f;
	const uint8_t *h;
	int ret, i, n, id;

	pt_strbuf_reset(sb);
	ret = pt_strbuf_addstr(sb, "protune-stage 1\n");
	if (!ret)
		ret = pt_model_print_func(m, s->func, 0, sb);
	if (!ret)
		ret = pt_model_print_stage(m, s, 0, sb);
	if (!ret)
		hash_buf(sb, s->local);
	n = producers(m, s, ids);
	for (i = 0; !ret && i < n; i++) {
		id = ids[i];
		if (id < 0)
			continue;
		if (id >= m->nfuncs) {
			ret = pt_model_print_input(m, id - m->nfuncs, 0, sb);
			continue;
		}
		f = &m->funcs[id];
		/* Reading its own Func, an update depends on the stage
		 * before it; any other producer is complete. */
		if (id == s->func)
			h = m->stages[f->first_stage + s->index - 1].hash;
		else
			h = m->stages[f->first_stage + f->nstages - 1].hash;
		ret = pt_strbuf_add(sb, h, 16);
	}
	if (!ret)
		hash_buf(sb, s->hash);
	return ret;
}

int pt_model_hash(struct pt_model *m)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	int *ids = NULL, max = 1, i, ret;

	ret = pt_model_validate(m, NULL);
	if (ret)
		return ret;
	ret = pt_strbuf_addf(&sb, "protune-space %d\n", PT_SPACE_VERSION);
	if (!ret)
		ret = pt_model_print_valid(m, 0, &sb);
	if (ret)
		goto out;
	hash_buf(&sb, m->key);
	for (i = 0; i < m->nstages; i++)
		if (m->stages[i].naccesses > max)
			max = m->stages[i].naccesses;
	ids = malloc((size_t)max * sizeof(*ids));
	if (!ids) {
		ret = PT_ENOMEM;
		goto out;
	}
	/* Stages are in topological order: producers are hashed first. */
	for (i = 0; !ret && i < m->nstages; i++)
		ret = hash_stage(m, &m->stages[i], ids, &sb);
out:
	free(ids);
	pt_strbuf_release(&sb);
	return ret;
}

void pt_hash_hex(const uint8_t hash[16], char out[33])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = digits[hash[i] >> 4];
		out[2 * i + 1] = digits[hash[i] & 15];
	}
	out[32] = '\0';
}

static int hexdigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int pt_hash_parse(const char *hex, uint8_t hash[16])
{
	uint8_t h[16];
	int i, hi, lo;

	if (!hex)
		return PT_EFORMAT;
	for (i = 0; i < 16; i++) {
		hi = hexdigit(hex[2 * i]);
		lo = hi >= 0 ? hexdigit(hex[2 * i + 1]) : -1;
		if (hi < 0 || lo < 0)
			return PT_EFORMAT;
		h[i] = (uint8_t)(hi << 4 | lo);
	}
	if (hex[32] != '\0')
		return PT_EFORMAT;
	memcpy(hash, h, 16);
	return 0;
}
