#include "pt_test.h"
#include "protune/pt_genargs.h"
#include "protune/pt_strbuf.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN "/opt/pt/lib/libprotune_halide.so"
#define HEAD "gen -p " PLUGIN " -s ProTune -t 120 "

struct gcase {
	const char *cmd;      /* words separated by single spaces; "''" is "" */
	int timeout;
	int ret;
	enum pt_gen_pass pass;
	const char *argv;     /* the rewrite joined by spaces, or NULL */
	const char *generator, *function, *target, *output_dir, *scheduler;
};

static const struct gcase cases[] = {
	/* plain generator */
	{ "gen -g blur -o out target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g blur -o out target=host auto_schedule=true",
	  "blur", NULL, "host", "out", NULL },
	/* several -p lists merged, duplicates dropped, ours last */
	{ "gen -p a.so -g b -p b.so,a.so,,c.so -o o target=host", 120, 0,
	  PT_PASS_NONE,
	  "gen -p a.so,b.so,c.so," PLUGIN " -s ProTune -t 120 -g b -o o "
	  "target=host auto_schedule=true", "b", NULL, "host", "o", NULL },
	/* the user already loads a libprotune_halide.so: keep theirs */
	{ "gen -p /usr/lib/libprotune_halide.so,x.so -g b -o o target=host",
	  120, 0, PT_PASS_NONE,
	  "gen -p /usr/lib/libprotune_halide.so,x.so -s ProTune -t 120 -g b "
	  "-o o target=host auto_schedule=true", "b", NULL, "host", "o", NULL },
	/* an empty -p */
	{ "gen -p '' -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", NULL },
	/* -s ProTune given: dropped, ours passed */
	{ "gen -g b -s ProTune -o o target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", "ProTune" },
	/* the last -s wins */
	{ "gen -g b -s Adams2019 -s ProTune -o o target=host", 120, 0,
	  PT_PASS_NONE, HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", "ProTune" },
	{ "gen -g b -s ProTune -s Adams2019 -o o target=host", 120, 0,
	  PT_PASS_AUTOSCHEDULER, NULL, "b", NULL, "host", "o", "Adams2019" },
	/* another autoscheduler */
	{ "gen -g b -o o -s Adams2019 target=host auto_schedule=true", 120, 0,
	  PT_PASS_AUTOSCHEDULER, NULL, "b", NULL, "host", "o", "Adams2019" },
	/* an empty -s sets nothing in Halide */
	{ "gen -g b -s '' -o o target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", NULL },
	/* no autoscheduling asked for */
	{ "gen -g b -o o target=host auto_schedule=false", 120, 0,
	  PT_PASS_NO_AUTOSCHEDULE, NULL, "b", NULL, "host", "o", NULL },
	{ "gen -g b -o o auto_schedule=False target=host", 120, 0,
	  PT_PASS_NO_AUTOSCHEDULE, NULL, "b", NULL, "host", "o", NULL },
	/* the last auto_schedule wins */
	{ "gen -g b -o o auto_schedule=false target=host auto_schedule=true",
	  120, 0, PT_PASS_NONE,
	  HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", NULL },
	/* auto_schedule=true kept once */
	{ "gen -g b -o o auto_schedule=true target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", NULL },
	/* the generator would reject it */
	{ "gen -g b -o o auto_schedule=0 target=host", 120, PT_EINVAL,
	  PT_PASS_NOT_GENERATOR, NULL, NULL, NULL, NULL, NULL, NULL },
	/* runtime only */
	{ "gen -r halide_rt -o o -e static_library target=host", 120, 0,
	  PT_PASS_RUNTIME, NULL, NULL, NULL, "host", "o", NULL },
	/* runtime and generator in one run: tuned */
	{ "gen -r rt -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-r rt -g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", NULL },
	/* a stub only */
	{ "gen -g b -o o -e cpp_stub", 120, 0, PT_PASS_CPP_STUB, NULL,
	  "b", NULL, NULL, "o", NULL },
	/* a stub among other outputs: the generator is built, tuned */
	{ "gen -g b -o o -e static_library,cpp_stub target=host", 120, 0,
	  PT_PASS_NONE,
	  HEAD "-g b -o o -e static_library,cpp_stub target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	/* not generators */
	{ "cc -g -o x x.c", 120, 0, PT_PASS_NOT_GENERATOR, NULL,
	  NULL, NULL, NULL, NULL, NULL },
	{ "cc -O2 -c x.c", 120, 0, PT_PASS_NOT_GENERATOR, NULL,
	  NULL, NULL, NULL, NULL, NULL },
	{ "ls", 120, 0, PT_PASS_NOT_GENERATOR, NULL,
	  NULL, NULL, NULL, NULL, NULL },
	{ "gen --help -g b -o o target=host", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g b -o o target=host extra", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g b -o o target=host a=b=c", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g b -o o target=host =x", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g b -o o target=", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g b target=host", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -o o -e static_library target=host", 120, 0,
	  PT_PASS_NOT_GENERATOR, NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g '' -o o target=host", 120, 0, PT_PASS_NOT_GENERATOR,
	  NULL, NULL, NULL, NULL, NULL, NULL },
	/* a flag without its value */
	{ "gen -g b -o o target=host -t", 120, PT_EINVAL,
	  PT_PASS_NOT_GENERATOR, NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -g", 120, PT_EINVAL, PT_PASS_NOT_GENERATOR, NULL,
	  NULL, NULL, NULL, NULL, NULL },
	/* -t: the larger wins, 0 (or less) wins */
	{ "gen -t 900 -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  "gen -p " PLUGIN " -s ProTune -t 900 -g b -o o target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	{ "gen -t 10 -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g b -o o target=host auto_schedule=true",
	  "b", NULL, "host", "o", NULL },
	{ "gen -t 0 -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  "gen -p " PLUGIN " -s ProTune -t 0 -g b -o o target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	{ "gen -t -5 -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  "gen -p " PLUGIN " -s ProTune -t 0 -g b -o o target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	{ "gen -t 10 -g b -o o target=host", 0, 0, PT_PASS_NONE,
	  "gen -p " PLUGIN " -s ProTune -t 0 -g b -o o target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	{ "gen -g b -o o target=host", 0, 0, PT_PASS_NONE,
	  "gen -p " PLUGIN " -s ProTune -t 0 -g b -o o target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	/* the last -t wins; std::stoi reads "300s" as 300 */
	{ "gen -t 5000 -t 300s -g b -o o target=host", 120, 0, PT_PASS_NONE,
	  "gen -p " PLUGIN " -s ProTune -t 300 -g b -o o target=host "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	{ "gen -t soon -g b -o o target=host", 120, PT_EINVAL,
	  PT_PASS_NOT_GENERATOR, NULL, NULL, NULL, NULL, NULL, NULL },
	{ "gen -t 99999999999 -g b -o o target=host", 120, PT_EINVAL,
	  PT_PASS_NOT_GENERATOR, NULL, NULL, NULL, NULL, NULL, NULL },
	/* generator parameters and other flags keep their order */
	{ "gen a=1 -g b z=2 -d 1 -o o target=host m=3 -e o,h", 120, 0,
	  PT_PASS_NONE,
	  HEAD "a=1 -g b z=2 -d 1 -o o target=host m=3 -e o,h "
	  "auto_schedule=true", "b", NULL, "host", "o", NULL },
	/* captured: -f, else -n; the last target= */
	{ "gen -g b -f fn -n base -o dir target=x86-64-linux", 120, 0,
	  PT_PASS_NONE,
	  HEAD "-g b -f fn -n base -o dir target=x86-64-linux "
	  "auto_schedule=true", "b", "fn", "x86-64-linux", "dir", NULL },
	{ "gen -g b -n base -o dir target=host target=arm-64-linux", 120, 0,
	  PT_PASS_NONE,
	  HEAD "-g b -n base -o dir target=host target=arm-64-linux "
	  "auto_schedule=true", "b", "base", "arm-64-linux", "dir", NULL },
	/* a flag's value may start with '-' */
	{ "gen -g b -o -weird target=host", 120, 0, PT_PASS_NONE,
	  HEAD "-g b -o -weird target=host auto_schedule=true",
	  "b", NULL, "host", "-weird", NULL },
};

/* Split `cmd` at spaces into argv (at most 31 words). */
static int split(const char *cmd, char buf[512], char *argv[32])
{
	int argc = 0;
	char *p;

	snprintf(buf, 512, "%s", cmd);
	for (p = strtok(buf, " "); p && argc < 31; p = strtok(NULL, " "))
		argv[argc++] = strcmp(p, "''") == 0 ? p + 2 : p;
	argv[argc] = NULL;
	return argc;
}

static void join(const struct pt_strvec *v, struct pt_strbuf *out)
{
	size_t i;

	for (i = 0; i < v->nr; i++)
		PT_CHECK(pt_strbuf_addf(out, "%s%s", i ? " " : "",
					v->v[i]) == 0);
}

static int check_str(const char *got, const char *want, const char *what,
		     const char *cmd)
{
	if ((!got && !want) || (got && want && strcmp(got, want) == 0))
		return 1;
	printf("# %s: %s is %s, want %s\n", cmd, what, got ? got : "NULL",
	       want ? want : "NULL");
	return 0;
}

PT_TEST(table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct gcase *c = &cases[i];
		struct pt_genargs g;
		struct pt_error err = PT_ERROR_INIT;
		struct pt_strbuf got = PT_STRBUF_INIT;
		char buf[512], *argv[32];
		int argc = split(c->cmd, buf, argv), ret, ok = 1;

		ret = pt_genargs_parse(argc, argv, PLUGIN, c->timeout, &g,
				       &err);
		if (ret != c->ret || g.pass != c->pass) {
			printf("# %s: ret %d pass %s (%s), want %d %s\n",
			       c->cmd, ret, pt_genargs_pass_name(g.pass),
			       err.msg, c->ret, pt_genargs_pass_name(c->pass));
			ok = 0;
		}
		if (ret)
			ok &= PT_CHECK(err.msg[0] != '\0');
		join(&g.argv, &got);
		ok &= check_str(g.argv.nr ? got.buf : NULL, c->argv, "argv",
				c->cmd);
		ok &= check_str(g.generator, c->generator, "generator", c->cmd);
		ok &= check_str(g.function, c->function, "function", c->cmd);
		ok &= check_str(g.target, c->target, "target", c->cmd);
		ok &= check_str(g.output_dir, c->output_dir, "output_dir",
				c->cmd);
		ok &= check_str(g.scheduler, c->scheduler, "scheduler", c->cmd);
		PT_CHECK(ok);
		pt_strbuf_release(&got);
		pt_genargs_release(&g);
	}
}

PT_TEST(missing_value_message)
{
	char *argv[] = { "gen", "-g", "b", "-o", NULL };
	struct pt_genargs g;
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(pt_genargs_parse(4, argv, PLUGIN, 60, &g, &err),
		     PT_EINVAL);
	PT_CHECK_STR(err.msg, "-o: missing value");
	PT_CHECK_INT(g.pass, PT_PASS_NOT_GENERATOR);
	PT_CHECK(g.argv.nr == 0 && !g.generator);
	pt_genargs_release(&g);
}

PT_TEST(bad_arguments)
{
	char *argv[] = { "gen", "-g", "b", "-o", "o", "target=host", NULL };
	struct pt_genargs g;
	struct pt_error err = PT_ERROR_INIT;

	PT_CHECK_INT(pt_genargs_parse(6, argv, "", 60, &g, &err), PT_EINVAL);
	PT_CHECK_INT(pt_genargs_parse(6, argv, "/a,b.so", 60, &g, &err),
		     PT_EINVAL);
	PT_CHECK_INT(pt_genargs_parse(6, argv, PLUGIN, -1, &g, &err),
		     PT_EINVAL);
	PT_CHECK_INT(pt_genargs_parse(0, argv, PLUGIN, 60, &g, &err),
		     PT_EINVAL);
	pt_genargs_release(&g);
}

/* A -p entry that is the plugin under another name (same inode). */
PT_TEST(plugin_same_file)
{
	char plugin[512], link[512], list[1100];
	char *argv[] = { "gen", "-p", list, "-g", "b", "-o", "o",
			 "target=host", NULL };
	struct pt_genargs g;
	struct pt_strbuf got = PT_STRBUF_INIT;
	FILE *f;

	snprintf(plugin, sizeof(plugin), "%s/protune.so", pt_test_tmpdir());
	snprintf(link, sizeof(link), "%s/other-name.so", pt_test_tmpdir());
	PT_REQUIRE((f = fopen(plugin, "w")) != NULL);
	fclose(f);
	PT_REQUIRE(symlink(plugin, link) == 0);
	snprintf(list, sizeof(list), "x.so,%s", link);
	PT_REQUIRE(pt_genargs_parse(8, argv, plugin, 60, &g, NULL) == 0);
	PT_REQUIRE(g.pass == PT_PASS_NONE && g.argv.nr > 3);
	PT_CHECK_STR(g.argv.v[2], list);
	/* a different file of another name is not the plugin */
	snprintf(list, sizeof(list), "x.so,%s/elsewhere.so", pt_test_tmpdir());
	pt_genargs_release(&g);
	PT_REQUIRE(pt_genargs_parse(8, argv, plugin, 60, &g, NULL) == 0);
	join(&g.argv, &got);
	PT_REQUIRE(g.argv.nr > 3);
	PT_CHECK(strstr(g.argv.v[2], "elsewhere.so,") != NULL);
	PT_CHECK(strstr(g.argv.v[2], "/protune.so") != NULL);
	pt_strbuf_release(&got);
	pt_genargs_release(&g);
}

PT_TEST(pass_names)
{
	PT_CHECK_STR(pt_genargs_pass_name(PT_PASS_NONE), "");
	PT_CHECK_STR(pt_genargs_pass_name(PT_PASS_NOT_GENERATOR),
		     "not-generator");
	PT_CHECK_STR(pt_genargs_pass_name(PT_PASS_RUNTIME), "runtime-only");
	PT_CHECK_STR(pt_genargs_pass_name(PT_PASS_CPP_STUB), "cpp-stub");
	PT_CHECK_STR(pt_genargs_pass_name(PT_PASS_AUTOSCHEDULER),
		     "explicit-autoscheduler");
	PT_CHECK_STR(pt_genargs_pass_name(PT_PASS_NO_AUTOSCHEDULE),
		     "auto-schedule-false");
}

PT_TEST(release_twice)
{
	char *argv[] = { "gen", "-g", "b", "-o", "o", "target=host", NULL };
	struct pt_genargs g = PT_GENARGS_INIT;

	pt_genargs_release(&g);
	PT_REQUIRE(pt_genargs_parse(6, argv, PLUGIN, 60, &g, NULL) == 0);
	pt_genargs_release(&g);
	pt_genargs_release(&g);
	PT_CHECK(g.argv.nr == 0 && !g.generator);
}

PT_SUITE(genargs,
	 { "table", table },
	 { "missing_value_message", missing_value_message },
	 { "bad_arguments", bad_arguments },
	 { "plugin_same_file", plugin_same_file },
	 { "pass_names", pass_names },
	 { "release_twice", release_twice });
