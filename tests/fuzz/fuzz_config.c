/* Fuzz target for the config file parser (libFuzzer entry point;
 * tests/fuzz/driver.c runs it without libFuzzer). Invariants beyond "no
 * crash, no leak, no undefined behaviour": a failure returns a negative
 * code, says why in one line starting with "NAME:LINE:" and leaves the
 * settings unchanged; after a success every setting's value, as printed,
 * reads back (pt_config_set) as the same value. */
#include "protune/pt_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NAME "/fuzz/protune.conf"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *const env[] = { "HOME=/home/fuzz", NULL };

static char *print(const struct pt_config *c)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_config_print(c, &sb) != 0)
		abort();
	return pt_strbuf_detach(&sb, NULL);
}

static char *value(const struct pt_config *c, int k)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;

	if (pt_config_value(c, (enum pt_conf_key)k, &sb) != 0)
		abort();
	return pt_strbuf_detach(&sb, NULL);
}

static void check_error(int ret, const struct pt_error *err)
{
	const char *p = err->msg + strlen(NAME);

	if (ret >= 0 || err->code != ret || strchr(err->msg, '\n'))
		abort();
	if (ret == PT_ENOMEM)
		return;
	if (strncmp(err->msg, NAME ":", strlen(NAME ":")) != 0)
		abort();
	p++;
	if (*p < '1' || *p > '9')
		abort();
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != ':')
		abort();
}

static void check_round_trip(const struct pt_config *c)
{
	struct pt_config d;
	int k;

	if (pt_config_init(&d, env, NULL) != 0)
		abort();
	for (k = 0; k < PT_CONF_NKEYS; k++) {
		char *v = value(c, k), *w;

		if (pt_config_set(&d, pt_config_key_name((enum pt_conf_key)k),
				  v, PT_CONF_CMDLINE, "--fuzz", NULL) != 0 &&
		    !(k == PT_CONF_CACHE_DIR && !c->cache_dir))
			abort();
		w = value(&d, k);
		if (strcmp(v, w) != 0)
			abort();
		free(v);
		free(w);
	}
	pt_config_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_error err = PT_ERROR_INIT;
	struct pt_config c;
	char *before, *after;
	int ret;

	if (pt_config_init(&c, env, NULL) != 0)
		abort();
	before = print(&c);
	ret = pt_config_parse(&c, (const char *)data, size, NAME,
			      PT_CONF_REPO_FILE, &err);
	after = print(&c);
	if (ret) {
		check_error(ret, &err);
		if (strcmp(before, after) != 0)
			abort();
	} else {
		check_round_trip(&c);
	}
	free(before);
	free(after);
	pt_config_release(&c);
	return 0;
}
