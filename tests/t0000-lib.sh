#!/bin/sh
# tests/lib.sh itself, as git's t0000-basic.sh: test_expect_success and
# test_expect_failure report what they should, a failing setup step is
# named where it fails, -v shows the body's output, -i stops there, and
# what a body sets stays set for the next test.
. "$(dirname "$0")/lib.sh"

# sub NAME <<BODY: a test script made of BODY after lib.sh, run with the
# given options; its TAP in $TMP/NAME.out, its exit status in $rc.
sub() {
	_name=$1
	shift
	mkdir -p "$TMP/sub/tests"
	cp "$TOP/tests/lib.sh" "$TMP/sub/tests/lib.sh"
	{
		echo '#!/bin/sh'
		echo '. "$(dirname "$0")/lib.sh"'
		cat
	} >"$TMP/sub/tests/$_name.sh"
	(cd "$TMP/sub" && sh "tests/$_name.sh" "$@") >"$TMP/$_name.out" 2>&1
	rc=$?
}

test_expect_success 'a passing body is ok, in order, with the plan at the end' '
	sub pass <<-\EOT &&
	test_expect_success "first" "true"
	test_expect_success "second" "x=1 && test \$x = 1"
	test_done
	EOT
	test "$rc" = 0 &&
	printf "ok 1 - first\nok 2 - second\n1..2\n" >"$TMP/want" &&
	test_cmp "$TMP/want" "$TMP/pass.out"
'

test_expect_success 'a failing setup step is named and its body shown' '
	sub setup <<-\EOT &&
	test_expect_success "setup" "
		mkdir -p repo &&
		false &&
		echo never
	"
	test_expect_success "after" "true"
	test_done
	EOT
	test "$rc" = 1 &&
	grep -q "^not ok 1 - setup$" "$TMP/setup.out" &&
	grep -q "^#	false &&$" "$TMP/setup.out" &&
	grep -q "^ok 2 - after$" "$TMP/setup.out" &&
	grep -q "^1..2$" "$TMP/setup.out"
'

test_expect_success 'variables a body sets stay set for the next test' '
	sub state <<-\EOT &&
	test_expect_success "set" "V=42 && cd \"\$TMP\""
	test_expect_success "see" "test \"\$V\" = 42 && test \"\$PWD\" = \"\$TMP\""
	test_done
	EOT
	test "$rc" = 0 && grep -q "^ok 2 - see$" "$TMP/state.out"
'

test_expect_success 'the body output is hidden, and shown with -v' '
	sub quiet <<-\EOT &&
	test_expect_success "noisy" "echo SECRET-\$((1 + 1)) && false"
	test_done
	EOT
	test "$rc" = 1 &&
	! grep -q SECRET-2 "$TMP/quiet.out" &&
	sub quiet -v <<-\EOT &&
	test_expect_success "noisy" "echo SECRET-\$((1 + 1)) && false"
	test_done
	EOT
	test "$rc" = 1 &&
	grep -q "^#   | SECRET-2$" "$TMP/quiet.out"
'

test_expect_success '-i stops at the first failure' '
	sub stop -i <<-\EOT &&
	test_expect_success "fails" "false"
	test_expect_success "never run" "true"
	test_done
	EOT
	test "$rc" = 1 &&
	! grep -q "never run" "$TMP/stop.out" &&
	grep -q "^1..1$" "$TMP/stop.out"
'

test_expect_success 'test_expect_failure: a known breakage, and one that vanished' '
	sub todo <<-\EOT &&
	test_expect_failure "still broken" "false"
	test_expect_failure "fixed now" "true"
	test_done
	EOT
	test "$rc" = 0 &&
	grep -q "^not ok 1 - still broken # TODO known breakage$" "$TMP/todo.out" &&
	grep -q "^ok 2 - fixed now # TODO known breakage vanished$" "$TMP/todo.out"
'

test_expect_success 'a missing prerequisite skips the test' '
	sub prereq <<-\EOT &&
	test_set_prereq HAVE_A
	test_expect_success HAVE_A "has a" "true"
	test_expect_success HAVE_A,HAVE_B "has b" "false"
	test_done
	EOT
	test "$rc" = 0 &&
	grep -q "^ok 1 - has a$" "$TMP/prereq.out" &&
	grep -q "^ok 2 # SKIP has b (missing HAVE_A,HAVE_B)$" "$TMP/prereq.out"
'

test_expect_success 'test_must_fail: a failure passes, success and signals do not' '
	test_must_fail false &&
	! test_must_fail true 2>/dev/null &&
	! test_must_fail sh -c "kill -SEGV \$\$" 2>/dev/null
'

command -v prove >/dev/null && test_set_prereq PROVE
test_expect_success PROVE 'prove reads it as TAP, a known breakage passing' '
	sub tap <<-\EOT &&
	test_expect_success "a" "true"
	test_expect_failure "b" "false"
	test_done
	EOT
	(cd "$TMP/sub" && prove tests/tap.sh) >"$TMP/prove.out" 2>&1 &&
	grep -q "^Result: PASS" "$TMP/prove.out"
'

test_done
