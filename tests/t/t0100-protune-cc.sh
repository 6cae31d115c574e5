#!/bin/sh
test_description='protune-cc passes commands through unchanged'
. "$PT_SRCDIR/tests/lib/test-lib.sh"

test_expect_success '--version and --help' '
	protune-cc --version >out &&
	test_grep "^protune-cc [0-9][0-9.]*$" out &&
	protune-cc --help >out &&
	test_grep "usage: protune-cc .*PROGRAM" out
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
