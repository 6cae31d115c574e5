/* Unit tests of pt_measure: the generator command, the statistics, the
 * RunGenMain.o cache and the failure paths (with stand-in tools; the real
 * thing is exercised by tests/t/t0220-protune-cmd.sh). */
#define _XOPEN_SOURCE 700 /* setenv */
#include "pt_test.h"
#include "protune/pt_measure.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A model with only what pt_measure reads: argv and target. */
static void fake_model(struct pt_model *m, const char *target,
		       const char *const *argv)
{
	memset(m, 0, sizeof(*m));
	m->version = PT_MODEL_FORMAT_VERSION;
	m->target = (char *)target;
	pt_strvec_init(&m->argv);
	PT_REQUIRE(pt_strvec_pushv(&m->argv, argv) == 0);
}

static char *joined(const struct pt_strvec *v)
{
	struct pt_strbuf sb = PT_STRBUF_INIT;
	size_t i;

	for (i = 0; i < v->nr; i++)
		PT_REQUIRE(pt_strbuf_addf(&sb, "%s%s", i ? " " : "",
					  v->v[i]) == 0);
	return pt_strbuf_detach(&sb, NULL);
}

static void check_rewrite(const char *target, const char *const *argv,
			  const char *want)
{
	struct pt_model m;
	struct pt_strvec out = PT_STRVEC_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char *got;

	fake_model(&m, target, argv);
	if (!PT_CHECK_INT(pt_measure_rewrite_argv(&m, "/tmp/T", "/l/p.so",
						  &out, &err), 0))
		printf("# %s\n", err.msg);
	got = joined(&out);
	PT_CHECK_STR(got, want);
	free(got);
	pt_strvec_release(&out);
	pt_strvec_release(&m.argv);
}

#define OURS "-o /tmp/T -e static_library,h,registration -n cand " \
	"-p /l/p.so -s ProTune auto_schedule=true -t 0 "

PT_TEST(rewrite_argv)
{
	const char *plain[] = {
		"/b/blur.generator", "-g", "blur", "-o", "out", "-e",
		"static_library,h,registration", "-n", "blur", "-p",
		"/x/libprotune_halide.so", "-s", "ProTune",
		"auto_schedule=true", "target=host", "size=test", NULL
	};
	const char *all[] = {
		"/b/g", "-t", "900", "-f", "fn", "machine_params=2,1,40",
		"-g", "gen", "-d", "0", "-p", "a.so,b.so", "target=x86-64-linux",
		"auto_schedule=false", "schedule=manual", "-e", "o", NULL
	};
	const char *bare[] = { "gen", "-g", "g", NULL };

	check_rewrite("x86-64-linux-avx2", plain,
		      "/b/blur.generator -g blur size=test " OURS
		      "target=x86-64-linux-avx2");
	check_rewrite("x86-64-linux-sse41", all,
		      "/b/g -f fn machine_params=2,1,40 -g gen -d 0 "
		      "schedule=manual " OURS "target=x86-64-linux-sse41");
	/* A sub-target of a multi-target build has no runtime of its own. */
	check_rewrite("x86-64-linux-avx2-no_runtime-sse41", bare,
		      "gen -g g " OURS "target=x86-64-linux-avx2-sse41");
	check_rewrite("x86-64-linux-no_runtime", bare,
		      "gen -g g " OURS "target=x86-64-linux");
	/* Features in Halide's order (by name), as the key was computed. */
	check_rewrite("x86-64-linux-sse41-avx2-fma", bare,
		      "gen -g g " OURS "target=x86-64-linux-avx2-fma-sse41");
}

static int rewrite_fails(const char *target, const char *const *argv,
			 const char *what)
{
	struct pt_model m;
	struct pt_strvec out = PT_STRVEC_INIT;
	struct pt_error err = PT_ERROR_INIT;
	int ret;

	fake_model(&m, target, argv);
	ret = pt_measure_rewrite_argv(&m, "/tmp/T", "/l/p.so", &out, &err);
	PT_CHECK_INT(out.nr, 0);
	if (!PT_CHECK(strstr(err.msg, what) != NULL))
		printf("# got: %s\n", err.msg);
	pt_strvec_release(&out);
	pt_strvec_release(&m.argv);
	return ret;
}

PT_TEST(rewrite_argv_refuses)
{
	const char *none[] = { NULL };
	const char *rel[] = { "./gen", "-g", "g", NULL };
	const char *runtime[] = { "/g", "-r", "rt", NULL };
	const char *dangling[] = { "/g", "-g", "g", "-o", NULL };
	const char *ok[] = { "/g", "-g", "g", NULL };

	PT_CHECK_INT(rewrite_fails("x86-64-linux", none, "no generator"),
		     PT_EINVAL);
	PT_CHECK_INT(rewrite_fails("x86-64-linux", rel, "relative path"),
		     PT_EINVAL);
	PT_CHECK_INT(rewrite_fails("x86-64-linux", runtime, "runtime only"),
		     PT_EINVAL);
	PT_CHECK_INT(rewrite_fails("x86-64-linux", dangling, "without its value"),
		     PT_EINVAL);
	PT_CHECK_INT(rewrite_fails("", ok, "no target"), PT_EINVAL);
}

/* What RunGen prints of a profiled pipeline (halide_print() prefixes
 * each call's text; the header is one call), 4 runs. */
static const char profile_report[] =
	"blur  BEST_TIME_MSEC_PER_ITER  1.5\n"
	"halide_print: blur\n"
	" total time: 6.000000 ms  samples: 60  runs: 4  time/run: 1.500000 ms\n"
	" average threads used: 1.900000\n"
	" heap allocations: 8  peak heap usage: 4096 bytes\n"
	"halide_print:   halide_malloc:         0.010ms   (0%)    threads: 2.000 \n"
	"halide_print:   blur_x:                1.000ms   (66%)   threads: 1.900  peak: 4096     num: 8         avg: 4096\n"
	"halide_print:   f: g:                  0.490ms   (32%)   threads: 1.800  stack: 64\n"
	"blur  SAMPLES  3\n";

PT_TEST(parse_profile)
{
	struct pt_measure_func *f = NULL;
	double heap = -1;
	int n = -1;

	PT_REQUIRE(pt_measure_parse_profile(profile_report, &f, &n, &heap) ==
		   0);
	PT_REQUIRE(PT_CHECK_INT(n, 3));
	PT_CHECK_STR(f[0].name, "halide_malloc");
	PT_CHECK(fabs(f[0].ms - 0.01) < 1e-12);
	PT_CHECK_STR(f[1].name, "blur_x");
	PT_CHECK(fabs(f[1].ms - 1.0) < 1e-12);
	PT_CHECK(fabs(f[1].allocs - 2.0) < 1e-12);  /* 8 over 4 runs */
	PT_CHECK_STR(f[2].name, "f: g");  /* the last ": " before the time */
	PT_CHECK(fabs(f[2].ms - 0.49) < 1e-12);
	PT_CHECK(f[2].allocs == 0);
	PT_CHECK(fabs(heap - 2.0) < 1e-12);
	free(f);

	/* The header alone: a report without Funcs. */
	PT_CHECK_INT(pt_measure_parse_profile(
			     " total time: 0.000000 ms  samples: 0  runs: 2  time/run: 0 ms\n"
			     " heap allocations: 0  peak heap usage: 0 bytes\n",
			     &f, &n, &heap), 0);
	PT_CHECK_INT(n, 0);
	free(f);
	/* No report at all, or one of no runs. */
	PT_CHECK_INT(pt_measure_parse_profile("blur BEST_TIME_MSEC_PER_ITER 1\n",
					      &f, &n, &heap), PT_EFORMAT);
	PT_CHECK(f == NULL);
	PT_CHECK_INT(pt_measure_parse_profile(
			     " total time: 0 ms  samples: 0  runs: 0  time/run: 0 ms\n",
			     &f, &n, &heap), PT_EFORMAT);
	PT_CHECK_INT(pt_measure_parse_profile("", &f, &n, &heap), PT_EFORMAT);
}

PT_TEST(median)
{
	double one[] = { 3 };
	double odd[] = { 5, 1, 4, 2, 3 };
	double even[] = { 4, 1, 3, 2 };
	double same[] = { 2, 2, 2 };

	PT_CHECK(pt_measure_median(one, 1) == 3);
	PT_CHECK(pt_measure_median(odd, 5) == 3);
	PT_CHECK(odd[0] == 1 && odd[4] == 5);  /* sorted: min and max */
	PT_CHECK(pt_measure_median(even, 4) == 2.5);
	PT_CHECK(even[0] == 1 && even[3] == 4);
	PT_CHECK(pt_measure_median(same, 3) == 2);
	PT_CHECK(isnan(pt_measure_median(one, 0)));
}

static void write_text(const char *path, const char *text, int mode)
{
	FILE *f = fopen(path, "w");

	PT_REQUIRE(f != NULL);
	fputs(text, f);
	PT_REQUIRE(fclose(f) == 0);
	PT_REQUIRE(chmod(path, (mode_t)mode) == 0);
}

/* A stand-in RunGenMain.cpp that compiles in a blink. */
static void fake_tools(const char *dir, const char *body)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/tools", dir);
	mkdir(path, 0777);
	PT_REQUIRE(setenv("PROTUNE_HALIDE_TOOLSDIR", path, 1) == 0);
	snprintf(path, sizeof(path), "%s/tools/RunGenMain.cpp", dir);
	write_text(path, body, 0644);
}

PT_TEST(rungen_main_cached)
{
	const char *tmp = pt_test_tmpdir();
	struct pt_strbuf a = PT_STRBUF_INIT, b = PT_STRBUF_INIT;
	struct pt_strbuf c = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char cache[4096];
	struct stat st1, st2;

	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	fake_tools(tmp, "int pt_fake_rungen_main = 1;\n");
	if (!PT_CHECK_INT(pt_measure_rungen_main(cache, NULL, &a, &err), 0))
		printf("# %s\n", err.msg);
	PT_REQUIRE(stat(a.buf, &st1) == 0);
	PT_CHECK(strncmp(a.buf, cache, strlen(cache)) == 0);
	PT_CHECK(strstr(a.buf, "/rungen/RunGenMain-") != NULL);
	/* The second call finds it. */
	PT_CHECK_INT(pt_measure_rungen_main(cache, "c++", &b, &err), 0);
	PT_CHECK_STR(b.buf, a.buf);
	PT_REQUIRE(stat(b.buf, &st2) == 0);
	PT_CHECK(st1.st_mtime == st2.st_mtime && st1.st_ino == st2.st_ino);
	/* Another source is another object. */
	fake_tools(tmp, "int pt_fake_rungen_main = 2;\n");
	PT_CHECK_INT(pt_measure_rungen_main(cache, NULL, &c, &err), 0);
	PT_CHECK(strcmp(c.buf, a.buf) != 0);
	pt_strbuf_release(&a);
	pt_strbuf_release(&b);
	pt_strbuf_release(&c);
}

PT_TEST(rungen_main_errors)
{
	const char *tmp = pt_test_tmpdir();
	struct pt_strbuf a = PT_STRBUF_INIT;
	struct pt_error err = PT_ERROR_INIT;
	char cache[4096];

	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	PT_REQUIRE(setenv("PROTUNE_HALIDE_TOOLSDIR", "/nonexistent/pt", 1) == 0);
	PT_CHECK_INT(pt_measure_rungen_main(cache, NULL, &a, &err),
		     PT_ENOTFOUND);
	PT_CHECK(strstr(err.msg, "/nonexistent/pt/RunGenMain.cpp") != NULL);
	fake_tools(tmp, "this is not C++\n");
	PT_CHECK_INT(pt_measure_rungen_main(cache, NULL, &a, &err), PT_EIO);
	PT_CHECK(strstr(err.msg, "compiling") != NULL);
	PT_CHECK_INT(pt_measure_rungen_main(cache, "pt-no-such-compiler", &a,
					    &err), PT_ENOTFOUND);
	PT_CHECK_INT(a.len, 0);
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	PT_REQUIRE(d != NULL);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

PT_TEST(generator_failure)
{
	const char *tmp = pt_test_tmpdir();
	struct pt_model m;
	struct pt_measure_opts o;
	struct pt_measure_result r;
	struct pt_error err = PT_ERROR_INIT;
	char gen[4096], cache[4096], troot[4096], log[4096];
	struct pt_strbuf script = PT_STRBUF_INIT;
	const char *argv[] = { gen, "-g", "g", "-o", "x", NULL };

	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	snprintf(troot, sizeof(troot), "%s/tmp", tmp);
	snprintf(gen, sizeof(gen), "%s/gen", tmp);
	snprintf(log, sizeof(log), "%s/gen.log", tmp);
	PT_REQUIRE(mkdir(troot, 0777) == 0);
	fake_tools(tmp, "int pt_fake_rungen_main = 3;\n");
	/* The stand-in generator records its argv and the schedule it was
	 * handed, then refuses it the way the plugin does. */
	PT_REQUIRE(pt_strbuf_addf(&script,
		 "#!/bin/sh\n"
		 "echo \"$@\" >'%s'\n"
		 "echo \"channel=${PROTUNE_CHANNEL_FDS-unset}\" >>'%s'\n"
		 "cat \"$PROTUNE_SCHEDULE_FILE\" >>'%s'\n"
		 "echo 'Unhandled exception: Error: ProTune refused the schedule: f1 has no dim v7' >&2\n"
		 "exit 255\n", log, log, log) == 0);
	write_text(gen, script.buf, 0755);
	pt_strbuf_release(&script);
	fake_model(&m, "x86-64-linux", argv);
	memset(&o, 0, sizeof(o));
	o.cache_dir = cache;
	o.plugin_path = "/l/p.so";
	o.tmp_root = troot;
	PT_REQUIRE(setenv("PROTUNE_CHANNEL_FDS", "3,4", 1) == 0);
	PT_CHECK_INT(pt_measure(&m, "protune-schedule 1\n", &o, &r, &err),
		     PT_EMISMATCH);
	if (!PT_CHECK(strstr(err.msg, "f1 has no dim v7") != NULL))
		printf("# %s\n", err.msg);
	PT_CHECK(strstr(err.msg, "exit 255") != NULL);
	PT_CHECK_INT(r.runs, 0);
	/* The temporary directory is gone. */
	PT_CHECK_INT(dir_entries(troot), 0);
	{
		FILE *f = fopen(log, "r");
		char line[1024];

		PT_REQUIRE(f != NULL);
		PT_REQUIRE(fgets(line, sizeof(line), f) != NULL);
		PT_CHECK(strstr(line, "-g g -o ") == line);
		PT_CHECK(strstr(line, " -n cand -p /l/p.so -s ProTune "
				"auto_schedule=true -t 0 target=x86-64-linux"));
		PT_REQUIRE(fgets(line, sizeof(line), f) != NULL);
		PT_CHECK_STR(line, "channel=unset\n");
		PT_REQUIRE(fgets(line, sizeof(line), f) != NULL);
		PT_CHECK_STR(line, "protune-schedule 1\n");
		fclose(f);
	}
	/* With keep_dir, the directory stays and is reported. */
	o.keep_dir = 1;
	PT_CHECK_INT(pt_measure(&m, "s\n", &o, &r, &err), PT_EMISMATCH);
	PT_CHECK(strncmp(r.dir, troot, strlen(troot)) == 0);
	PT_CHECK_INT(dir_entries(troot), 1);
	pt_strvec_release(&m.argv);
}

PT_TEST(bad_arguments)
{
	struct pt_model m;
	struct pt_measure_opts o;
	struct pt_measure_result r;
	struct pt_error err = PT_ERROR_INIT;
	const char *argv[] = { "/g", NULL };

	fake_model(&m, "x86-64-linux", argv);
	memset(&o, 0, sizeof(o));
	PT_CHECK_INT(pt_measure(&m, "", &o, &r, &err), PT_EINVAL);
	o.cache_dir = "/tmp";
	PT_CHECK_INT(pt_measure(&m, "", &o, &r, &err), PT_EINVAL);
	PT_CHECK(strstr(err.msg, "plugin") != NULL);
	pt_strvec_release(&m.argv);
}

PT_SUITE(measure,
	 { "rewrite the generator command", rewrite_argv },
	 { "refuse commands that cannot be re-run", rewrite_argv_refuses },
	 { "median", median },
	 { "the profiler's report", parse_profile },
	 { "RunGenMain.o is compiled once", rungen_main_cached },
	 { "RunGenMain.o errors", rungen_main_errors },
	 { "a generator failure is an error with its reason",
	   generator_failure },
	 { "bad arguments", bad_arguments });
