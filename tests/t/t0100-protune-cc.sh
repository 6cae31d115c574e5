#!/bin/sh
test_description='protune-cc passes commands through unchanged'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

test_expect_success '--version and --help' '
	protune-cc --version >out &&
	test_grep "^protune-cc [0-9][0-9.]*$" out &&
	protune-cc --help >out &&
	test_grep "usage: protune-cc .*PROGRAM" out
'

# The settings' names, from `protune config` (one line per setting of
# driver/pt_config.c).
test_expect_success 'protune-cc --help and protune.conf(5) name every setting' '
	protune config >cfg &&
	sed -n "s/^\([a-z_]*\) *= .*/\1/p" cfg >names &&
	test_line_count -ge 11 names &&
	protune-cc --help >out &&
	while read n; do
		o=$(echo "$n" | tr _ -) &&
		grep -q -e "--$o=" out ||
			{ echo "protune-cc --help lacks --$o="; return 1; }
		grep -q "^\.BR $n \"" "$PT_SRCDIR/doc/protune.conf.5" ||
			{ echo "protune.conf.5 lacks $n"; return 1; }
		grep -q "$n" "$PT_SRCDIR/doc/protune-cc.1" ||
			{ echo "protune-cc.1 lacks $n"; return 1; }
	done <names
'

# A generator run that writes its output when it runs at all.
test_expect_success 'an unreadable PROTUNE_PLUGIN is a bad setting, named before the generator runs' '
	printf "#!/bin/sh\nmkdir -p genout && echo ran >genout/fake.a\n" >fakegen &&
	chmod +x fakegen &&
	test_expect_code 2 env PROTUNE_PLUGIN=lib/nonexist.so \
		protune-cc ./fakegen -g fake -o genout target=host >stdout 2>err &&
	echo "protune-cc: PROTUNE_PLUGIN: '"'"'lib/nonexist.so'"'"': cannot read the plugin: No such file or directory" >expect &&
	test_cmp expect err &&
	! test -e genout &&
	mkdir adir &&
	test_expect_code 2 env PROTUNE_PLUGIN=$PWD/adir \
		protune-cc ./fakegen -g fake -o genout target=host 2>err &&
	test_grep "PROTUNE_PLUGIN: .*adir.: cannot read the plugin: not a regular file" err &&
	! test -e genout
'

test_expect_success 'an unreadable PROTUNE_PLUGIN does not matter to commands not tuned' '
	PROTUNE_PLUGIN=lib/nonexist.so protune-cc ./fakegen -g fake -o genout \
		target=host auto_schedule=false &&
	test_grep ran genout/fake.a &&
	PROTUNE_PLUGIN=lib/nonexist.so protune-cc echo hi >out &&
	test_grep hi out
'

test_expect_success 'without an installed plugin only a run to tune fails' '
	rm -rf genout &&
	mkdir -p nolib/bin &&
	cp "$PT_BUILD_DIR/bin/protune-cc" nolib/bin/ &&
	env -u PROTUNE_PLUGIN nolib/bin/protune-cc echo hi >out &&
	test_grep hi out &&
	test_expect_code 1 env -u PROTUNE_PLUGIN nolib/bin/protune-cc \
		./fakegen -g fake -o genout target=host 2>err &&
	test_grep "cannot find libprotune_halide.so (not in .*nolib/bin/../lib); set PROTUNE_PLUGIN" err &&
	! test -e genout
'

test_expect_success 'no arguments is a usage error' '
	test_must_fail protune-cc 2>err &&
	test_grep usage: err
'

test_expect_success 'argv reaches the program unchanged' '
	protune-cc printf "[%s]\n" "a b" "" "-g" "*" "x=y" >actual &&
	printf "[%s]\n" "a b" "" "-g" "*" "x=y" >expect &&
	test_cmp expect actual
'

test_expect_success 'exit status and stdin pass through' '
	echo hello | protune-cc sh -c "cat; exit 3" >out;
	test $? = 3 &&
	test_grep hello out
'

test_expect_success 'a death by signal is the program own' '
	protune-cc sh -c "kill -TERM \$\$";
	test $? = 143
'

test_expect_success 'an unknown program exits 127 and says so' '
	protune-cc pt-no-such-program 2>err;
	test $? = 127 &&
	test_grep "pt-no-such-program: command not found" err
'

test_expect_success 'installed under the name of the program it wraps, it skips itself' '
	mkdir masq real &&
	ln -s "$PT_BUILD_DIR/bin/protune-cc" masq/mygen &&
	printf "#!/bin/sh\necho real mygen \"\$@\"\n" >real/mygen &&
	chmod +x real/mygen &&
	PATH="$PWD/masq:$PWD/real:$PATH" protune-cc mygen -o x >out &&
	echo "real mygen -o x" >expect &&
	test_cmp expect out
'

test_expect_success 'a wrapper that finds only itself fails instead of looping' '
	mkdir only &&
	ln -s "$PT_BUILD_DIR/bin/protune-cc" only/loopgen &&
	PATH="$PWD/only" "$PT_BUILD_DIR/bin/protune-cc" loopgen 2>err;
	test $? = 127 &&
	test_grep "the only match is this program itself" err
'

test_done
