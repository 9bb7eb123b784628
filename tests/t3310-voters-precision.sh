#!/bin/sh
# The offline voters stay quiet where a match or a rule cannot tell a bug
# from correct code, and still speak on the bug itself. Each case is a
# misfire measured on real history (iproute2, rdma-core) with quorum eval.
. "$(dirname "$0")/lib.sh"

CLOCK_START=1500000000 CLOCK_STEP=$((86400 * 5))
. "$TOP/tests/lib/history.sh"

history_repo

# review PATCHDIR: quorum review of that one patch, then back to base.
review() {
	run "$QUORUM" review -C "$R" "$TMP/$1"/*.patch
}
# patch NAME SUBJECT: format the last commit into $TMP/NAME, reset to base.
patch() {
	tick; git commit -q -am "$2"
	git format-patch -q -o "$TMP/$1" -1 HEAD
	git reset -q --hard base
}

# 1. A typo bug (`=` for `==`) and its fix; the fixed line is the
# resemblance. A patch that writes the fixed line again repeats the fix,
# not the bug (iproute2 96303c25eee6 and two more: "resembles code that
# f7dd7e5e713d had to fix" on `family == AF_MPLS`).
cat >prefix.c <<'EOC'
#include "utils.h"

int get_prefix(struct inet_prefix *dst, char *arg, int family)
{
	if ((family == AF_DECnet) || (family = AF_MPLS))
		return parse_special_prefix(dst, arg, family);
	dst->bytelen = compute_prefix_bytes(arg, family);
	dst->bitlen = compute_prefix_bits(arg, family);
	return 0;
}
EOC
tick; git add prefix.c && git commit -q -m "utils: parse MPLS prefixes"
TYPO=$(git rev-parse HEAD)
sed -i 's/(family = AF_MPLS)/(family == AF_MPLS)/' prefix.c
tick; git commit -q -am "utils: fix typo in get_prefix()" \
	-m "An assignment where a comparison was meant made every family MPLS.

$(fixes "$TYPO")"
TYPO_FIX=$(git rev-parse HEAD)

# 2. A dump function that prints every record with the same line; a later
# fix changed one record's format, not the line (rdma-core
# 571249f8c220: five commits flagged for adding a dump line like it).
cat >dump.c <<'EOC'
#include "dump.h"

int dump_action(FILE *f, struct action *action, uint64_t id)
{
	int ret;

	switch (action->type) {
	case ACTION_FT:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\n",
			      REC_ACTION_FT, id, action->table->object_id);
		break;
	case ACTION_QP:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\n",
			      REC_ACTION_QP, id, action->qp->qp_num);
		break;
	case ACTION_CTR:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\n",
			      REC_ACTION_CTR, id, action->ctr->object_id);
		break;
	default:
		return 0;
	}
	return ret < 0 ? ret : 0;
}
EOC
tick; git add dump.c && git commit -q -m "dump: add the action dump"
DUMP=$(git rev-parse HEAD)
python3 - <<'EOP'
s = open("dump.c").read()
s = s.replace('''		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\\n",
			      REC_ACTION_FT, id, action->table->object_id);''',
'''		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x,0x%" PRIx64 "\\n",
			      REC_ACTION_FT, id, action->table->object_id,
			      (uint64_t)(uintptr_t)action->table);''')
open("dump.c", "w").write(s)
EOP
tick; git commit -q -am "dump: fix the FT record for the parser" \
	-m "The parser needs the handle to find the table.

$(fixes "$DUMP")"
# 3. A Fixes: on a cleanup: the "bug" was an unused variable (iproute2
# 8d05f33a381a "tipc: Drop unused variable 'genl'", matched by three
# devlink callbacks that use theirs).
cat >node.c <<'EOC'
#include "node.h"

static int node_list_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	struct nlattr *info[TIPC_NLA_MAX + 1] = {};

	mnl_attr_parse(nlh, sizeof(*genl), parse_attrs, info);
	if (!info[TIPC_NLA_NODE])
		return MNL_CB_ERROR;
	return MNL_CB_OK;
}
EOC
tick; git add node.c && git commit -q -m "tipc: add the node list"
NODE=$(git rev-parse HEAD)
sed -i '/struct genlmsghdr \*genl/d; s/sizeof(\*genl)/sizeof(struct genlmsghdr)/' node.c
tick; git commit -q -am "tipc: drop unused variable 'genl'" \
	-m "It is only used in a sizeof().

$(fixes "$NODE")"
git tag base

# The patches under review.
cat >>prefix.c <<'EOC'

int get_addr(struct inet_prefix *dst, char *arg, int family)
{
	if ((family == AF_DECnet) || (family == AF_MPLS))
		return parse_special_prefix(dst, arg, family);
	dst->bytelen = compute_prefix_bytes(arg, family);
	dst->bitlen = compute_prefix_bits(arg, family);
	return 1;
}
EOC
patch fixed "utils: add get_addr()"
cat >>prefix.c <<'EOC'

int get_addr(struct inet_prefix *dst, char *arg, int family)
{
	if ((family == AF_DECnet) || (family = AF_MPLS))
		return parse_special_prefix(dst, arg, family);
	dst->bytelen = compute_prefix_bytes(arg, family);
	dst->bitlen = compute_prefix_bits(arg, family);
	return 1;
}
EOC
patch typo "utils: add get_addr() with the old typo"
python3 - <<'EOP'
s = open("dump.c").read()
s = s.replace('''	default:''', '''	case ACTION_VPORT:
		ret = fprintf(f, "%d,0x%" PRIx64 ",0x%x\\n",
			      REC_ACTION_VPORT, id, action->vport->num);
		break;
	default:''')
open("dump.c", "w").write(s)
EOP
patch vport "dump: dump the vport action"
cat >>node.c <<'EOC'

static int node_get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	struct nlattr *info[TIPC_NLA_MAX + 1] = {};

	mnl_attr_parse(nlh, sizeof(*genl), parse_attrs, info);
	if (!info[TIPC_NLA_NODE])
		return MNL_CB_ERROR;
	return MNL_CB_OK;
}
EOC
patch genl "tipc: get one node"

run "$QUORUM" index -C "$R"
is "$rc" 0 "index"

review fixed
unlike "$TMP/out" "had to fix" "a patch writing the fixed line (==) has no history finding"
review typo
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$TYPO_FIX") had to fix" \
	"the same function with the typo (=) still has one"
like "$TMP/out" 'The fix changed this line: if \(\(family == AF_DECnet\) \|\| \(family =$' \
	"... quoting the buggy line"
review vport
unlike "$TMP/out" "had to fix" "a new dump line like the ones the fix left alone has no history finding"
review genl
unlike "$TMP/out" "had to fix" "code like what a cleanup changed (its subject says so) has no history finding"

# 3b. A long buggy line alone speaks only in the function the fix
# changed; a patch that also touches that function does not carry it to
# others (iproute2 32a121cba257: a loop over meta_table in em_meta.c
# flagged because the patch also edited get_rate() in tc_util.c).
cd "$TMP" && mkdir rate && cd rate && git init -q
cat >rate.c <<'EOC'
#include "units.h"

int get_rate(unsigned int *rate, const char *str)
{
	double bps = strtod(str, NULL);
	int i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (bps < units[i + 1].scale)
			break;
	}
	*rate = bps / units[i].scale;
	return 0;
}

int rate_unit_count(void)
{
	int n = 0;

	n += units_static;
	n += units_dynamic;
	n += units_reserved;
	return n;
}

int print_rate(char *buf, unsigned int rate)
{
	return sprintf(buf, "%u", rate);
}
EOC
tick; git add rate.c && git commit -q -m "tc: more user friendly rates"
RATE=$(git rev-parse HEAD)
sed -i 's/i < ARRAY_SIZE(units); i++/i < ARRAY_SIZE(units) - 1; i++/' rate.c
tick; git commit -q -am "tc: fix get_rate for ludicrous speeds" \
	-m "units[i + 1] read past the table.

$(fixes "$RATE")"
RATE_FIX=$(git rev-parse HEAD)
git tag rate
run "$QUORUM" index -C "$TMP/rate"
sed -i 's/	return 0;/	return validate_rate_value(rate, bps);/' rate.c
python3 - <<'EOP'
s = open("rate.c").read()
s = s.replace("""	return sprintf(buf, "%u", rate);""", """	int i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (rate % units[i].scale)
			break;
	}
	return sprintf(buf, "%u%s", rate, units[i].name);""")
open("rate.c", "w").write(s)
EOP
tick; git commit -q -am "tc: print rates with units"
git format-patch -q -o "$TMP/elsewhere" -1 HEAD
git reset -q --hard rate
python3 - <<'EOP'
s = open("rate.c").read()
s = s.replace("""	*rate = bps / units[i].scale;""", """	*rate = bps / units[i].scale;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (*rate < units[i].min)
			return -1;
	}""")
open("rate.c", "w").write(s)
EOP
tick; git commit -q -am "tc: check the rate's minimum"
git format-patch -q -o "$TMP/inside" -1 HEAD
git reset -q --hard rate
run "$QUORUM" review -C "$TMP/rate" "$TMP"/elsewhere/*.patch
unlike "$TMP/out" "had to fix" "the buggy line in another function has no history finding"
run "$QUORUM" review -C "$TMP/rate" "$TMP"/inside/*.patch
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$RATE_FIX") had to fix" \
	"... in the function the fix changed, it has"

# 3c. A fix that added a check next to a line: the same line elsewhere
# misses the check only when the code there uses what the check tests
# (iproute2 e3dee3c81f7f added `if (!rd->port_idx)` before link's
# `return rd_exec_cmd(...)`; two new dispatchers with no port flagged).
cd "$TMP" && mkdir disp && cd disp && git init -q
dispatcher() { # dispatcher OBJ
	cat <<EOC

static int $1_one_show(struct rd *rd)
{
	const struct rd_cmd cmds[] = {
		{ NULL,		$1_no_args},
		{ "show",	$1_show},
		{ 0 }
	};

	return rd_exec_cmd(rd, cmds, "parameter");
}
EOC
}
{ echo '#include "rdma.h"'; dispatcher link; } >link.c
sed -i 's/return rd_exec_cmd(rd, cmds, "parameter");/return link_exec(rd, cmds);/' link.c
tick; git add link.c && git commit -q -m "rdma: add link object"
LINK=$(git rev-parse HEAD)
sed -i 's/return link_exec(rd, cmds);/return rd_exec_cmd(rd, cmds, "parameter");/' link.c
tick; git commit -q -am "rdma: one command executor for all objects"
python3 - <<'EOP'
s = open("link.c").read()
s = s.replace("""	return rd_exec_cmd""", """	if (!rd->port_idx)
		return 0;

	return rd_exec_cmd""")
open("link.c", "w").write(s)
EOP
tick; git commit -q -am "rdma: check that the port index exists before the link layer" \
	-m "Link layer operates on a port.

$(fixes "$LINK")"
PORT_FIX=$(git rev-parse HEAD)
git tag disp
run "$QUORUM" index -C "$TMP/disp"
{ echo '#include "rdma.h"'; dispatcher dev; } >dev.c
git add dev.c; tick; git commit -q -m "rdma: add dev object"
git format-patch -q -o "$TMP/devdisp" -1 HEAD
git reset -q --hard disp
{ echo '#include "rdma.h"'; dispatcher port
  printf '\nstatic int port_shown(struct rd *rd)\n{\n\treturn rd->port_idx;\n}\n'; } >port.c
git add port.c; tick; git commit -q -m "rdma: add port object"
git format-patch -q -o "$TMP/portdisp" -1 HEAD
git reset -q --hard disp
run "$QUORUM" review -C "$TMP/disp" "$TMP"/devdisp/*.patch
unlike "$TMP/out" "had to fix" "a dispatcher that uses no port does not miss the port check"
run "$QUORUM" review -C "$TMP/disp" "$TMP"/portdisp/*.patch
like "$TMP/out" "code that $(git rev-parse --short=12 "$PORT_FIX") had to fix" \
	"... one that uses the port index does"

# 3d. A short line of keywords and two names ("for dev in lst:", "if
# len(lst) == 0:") is in every test that loops over devices: a fix that
# changed it is no evidence against the next loop (rdma-core
# 57b2f8c216d9, flagged for 2da066ae0fb5). A long line the fix changed
# still is (cbb04cdfaff1 repeated `port_attr = ctx.query_port(1)` and was
# fixed the same way later).
cd "$TMP" && mkdir devtest && cd devtest && git init -q
cat >test_device.py <<'EOC'
import unittest
import pyverbs.device as d


class DeviceTest(unittest.TestCase):
    def test_open_dev(self):
        lst = d.get_device_list()
        if len(lst) == 0:
            raise unittest.SkipTest('No IB devices found')
        for dev in lst:
            d.Context(name=dev.name.decode())

    def test_query_gid_table(self):
        with d.Context(name=self.dev_name) as ctx:
            device_attr = ctx.query_device()
            port_attr = ctx.query_port(1)
            max_entries = device_attr.phys_port_cnt * port_attr.gid_tbl_len
            ctx.query_gid_table(max_entries)
EOC
tick; git add test_device.py && git commit -q -m "tests: device tests"
DEVT=$(git rev-parse HEAD)
python3 - <<'EOP'
s = open("test_device.py").read()
s = s.replace("""    def test_open_dev(self):
        lst = d.get_device_list()
        if len(lst) == 0:
            raise unittest.SkipTest('No IB devices found')
        for dev in lst:""", """    @staticmethod
    def get_device_list():
        lst = d.get_device_list()
        if len(lst) == 0:
            raise unittest.SkipTest('No IB device found')
        return lst

    def test_open_dev(self):
        for dev in self.get_device_list():""")
s = s.replace("""            port_attr = ctx.query_port(1)
            max_entries = device_attr.phys_port_cnt * port_attr.gid_tbl_len""",
"""            max_entries = 0
            for port_num in range(1, device_attr.phys_port_cnt + 1):
                port_attr = ctx.query_port(port_num)
                max_entries += port_attr.gid_tbl_len""")
open("test_device.py", "w").write(s)
EOP
tick; git commit -q -am "tests: fix the device list and the GID table size" \
	-m "Devices with two ports have a GID table per port.

$(fixes "$DEVT")"
DEVT_FIX=$(git rev-parse HEAD)
git tag devtest
run "$QUORUM" index -C "$TMP/devtest"
cat >>test_device.py <<'EOC'

    def test_query_device(self):
        lst = d.get_device_list()
        if len(lst) == 0:
            raise unittest.SkipTest('No device')
        for dev in lst:
            with d.Context(name=dev.name.decode()) as ctx:
                ctx.query_device()
EOC
tick; git commit -q -am "tests: query the device"
git format-patch -q -o "$TMP/devloop" -1 HEAD
git reset -q --hard devtest
cat >>test_device.py <<'EOC'

    def test_query_gid_ex(self):
        with d.Context(name=self.dev_name) as ctx:
            device_attr = ctx.query_device()
            port_attr = ctx.query_port(1)
            max_entries = device_attr.phys_port_cnt * port_attr.gid_tbl_len
            ctx.query_gid_ex(max_entries)
EOC
tick; git commit -q -am "tests: query the GIDs of all ports"
git format-patch -q -o "$TMP/devgid" -1 HEAD
git reset -q --hard devtest
run "$QUORUM" review -C "$TMP/devtest" "$TMP"/devloop/*.patch
unlike "$TMP/out" "had to fix" "a loop over the devices like the one a fix changed has no history finding"
run "$QUORUM" review -C "$TMP/devtest" "$TMP"/devgid/*.patch
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$DEVT_FIX") had to fix" \
	"... the port 1 the fix replaced, repeated, has"
like "$TMP/out" 'The fix changed this line: port_attr = ctx.query_port\(1\)' "... quoting it"

# 3e. A fix that made the line it changed depend on a condition (`offset
# = GRH_SIZE if qp_type == e.IBV_QPT_UD else 0`, then `mr.write(msg,
# agr_obj.msg_size + offset)`) fixed it for that case only: the same line
# where the code tests no QP type has no bug (rdma-core aa98634f41ea, a
# RAW QP's send buffer, flagged for 2e3550083e69). Where it does, the
# line is flagged.
cd "$TMP" && mkdir ud && cd ud && git init -q
cat >traffic.py <<'EOC'
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

GRH_SIZE = 40


def get_send_wr(agr_obj, is_server):
    qp_type = agr_obj.qp.qp_type
    mr = agr_obj.mr
    send_sge = SGE(mr.buf, agr_obj.msg_size, mr.lkey)
    msg = agr_obj.msg_size * ('s' if is_server else 'c')
    mr.write(msg, agr_obj.msg_size)
    return SendWR(num_sge=1, sg=[send_sge])
EOC
tick; git add traffic.py && git commit -q -m "tests: traffic helpers"
TRAF=$(git rev-parse HEAD)
python3 - <<'EOP'
s = open("traffic.py").read()
s = s.replace("""    send_sge = SGE(mr.buf, agr_obj.msg_size, mr.lkey)
    msg = agr_obj.msg_size * ('s' if is_server else 'c')
    mr.write(msg, agr_obj.msg_size)""", """    offset = GRH_SIZE if qp_type == e.IBV_QPT_UD else 0
    send_sge = SGE(mr.buf + offset, agr_obj.msg_size, mr.lkey)
    msg = (agr_obj.msg_size + offset) * ('s' if is_server else 'c')
    mr.write(msg, agr_obj.msg_size + offset)""")
open("traffic.py", "w").write(s)
EOP
tick; git commit -q -am "tests: fix traffic methods for UD QP" \
	-m "Properly handle the GRH offset when creating an SGE.

$(fixes "$TRAF")"
TRAF_FIX=$(git rev-parse HEAD)
git tag ud
run "$QUORUM" index -C "$TMP/ud"
cat >>traffic.py <<'EOC'


def get_send_elements_raw_qp(agr_obj):
    mr = agr_obj.mr
    msg = gen_ipv4_udp_packet(agr_obj.msg_size)
    mr.write(msg, agr_obj.msg_size)
    send_sge = SGE(mr.buf, agr_obj.msg_size, mr.lkey)
    return SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[send_sge])
EOC
tick; git commit -q -am "tests: raw ethernet traffic"
git format-patch -q -o "$TMP/rawqp" -1 HEAD
git reset -q --hard ud
cat >>traffic.py <<'EOC'


def get_send_wr_xrc(agr_obj, is_server):
    qp_type = agr_obj.sqp_lst[0].qp_type
    mr = agr_obj.mr
    send_sge = SGE(mr.buf, agr_obj.msg_size, mr.lkey)
    msg = agr_obj.msg_size * ('s' if is_server else 'c')
    mr.write(msg, agr_obj.msg_size)
    return SendWR(num_sge=1, sg=[send_sge])
EOC
tick; git commit -q -am "tests: XRC traffic"
git format-patch -q -o "$TMP/xrcqp" -1 HEAD
git reset -q --hard ud
run "$QUORUM" review -C "$TMP/ud" "$TMP"/rawqp/*.patch
unlike "$TMP/out" "had to fix" "a line a fix made conditional, where nothing tests the condition, has no history finding"
run "$QUORUM" review -C "$TMP/ud" "$TMP"/xrcqp/*.patch
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$TRAF_FIX") had to fix" \
	"... where the code has the QP type, it has"

# 3f. A fix that wrote a new function before another one's definition
# added nothing that definition's line was missing: code of that shape
# does not miss it (iproute2 c2d7c45c320d, a reload stats printer like
# pr_out_health(), flagged for 746b66b00578 that added
# pr_out_dump_report_timestamp() before it). A check the fix added in
# the function, next to its first line, is still missed by a copy.
cd "$TMP" && mkdir health && cd health && git init -q
cat >health.c <<'EOC'
#include "devlink.h"

static void pr_out_region(struct dl *dl, struct nlattr **tb)
{
	pr_out_str(dl, "region", mnl_attr_get_str(tb[DEVLINK_ATTR_REGION_NAME]));
	pr_out_u64(dl, "size", mnl_attr_get_u64(tb[DEVLINK_ATTR_REGION_SIZE]));
	pr_out_u32(dl, "snapshot", mnl_attr_get_u32(tb[DEVLINK_ATTR_REGION_SNAPSHOT_ID]));
}

static void pr_out_health(struct dl *dl, struct nlattr **tb_health)
{
	struct nlattr *tb[DEVLINK_ATTR_MAX + 1] = {};
	enum devlink_health_reporter_state state;
	const struct nlattr *attr;
	int err;

	err = mnl_attr_parse_nested(tb_health[DEVLINK_ATTR_HEALTH_REPORTER],
				    attr_cb, tb);
	if (err != MNL_CB_OK)
		return;
	pr_out_str(dl, "reporter",
		   mnl_attr_get_str(tb[DEVLINK_ATTR_HEALTH_REPORTER_NAME]));
	state = mnl_attr_get_u8(tb[DEVLINK_ATTR_HEALTH_REPORTER_STATE]);
	pr_out_str(dl, "state", health_state_name(state));
	if (tb[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS])
		pr_out_u64(dl, "last_dump",
			   mnl_attr_get_u64(tb[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS]));
}
EOC
tick; git add health.c && git commit -q -m "devlink: add health show"
HEALTH=$(git rev-parse HEAD)
python3 - <<'EOP'
s = open("health.c").read()
s = s.replace("""static void pr_out_health(""", """static void pr_out_dump_ts(struct dl *dl, const struct nlattr *attr)
{
	char dump_date[32];
	time_t tv_sec;

	tv_sec = mnl_attr_get_u64(attr) / 1000000000;
	strftime(dump_date, sizeof(dump_date), "%Y-%m-%d", localtime(&tv_sec));
	pr_out_str(dl, "last_dump_date", dump_date);
}

static void pr_out_health(""")
s = s.replace("""	if (tb[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS])
		pr_out_u64(dl, "last_dump",""", """	if (tb[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS])
		pr_out_dump_ts(dl, tb[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS]);
	else if (tb[DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS])
		pr_out_u64(dl, "last_dump",""")
open("health.c", "w").write(s)
EOP
tick; git commit -q -am "devlink: a time stamp in ns for the health dump" \
	-m "$(fixes "$HEALTH")"
HEALTH_FIX=$(git rev-parse HEAD)
cat >trap.c <<'EOC'
#include "devlink.h"

static void pr_out_trap_group(struct dl *dl, struct nlattr **tb_group)
{
	const char *group_name;
	uint32_t policer_id;

	group_name = mnl_attr_get_str(tb_group[DEVLINK_ATTR_TRAP_GROUP_NAME]);
	policer_id = mnl_attr_get_u32(tb_group[DEVLINK_ATTR_TRAP_POLICER_ID]);
	pr_out_str(dl, "name", group_name);
	pr_out_uint(dl, "policer", policer_id);
	pr_out_bool(dl, "generic", !!tb_group[DEVLINK_ATTR_TRAP_GENERIC]);
}
EOC
tick; git add trap.c && git commit -q -m "devlink: show trap groups"
TRAP=$(git rev-parse HEAD)
sed -i 's/^{$/{\n\tif (!tb_group[DEVLINK_ATTR_TRAP_POLICER_ID])\n\t\treturn;/' trap.c
tick; git commit -q -am "devlink: fix a crash on a trap group without a policer" \
	-m "$(fixes "$TRAP")"
TRAP_FIX=$(git rev-parse HEAD)
git tag health
run "$QUORUM" index -C "$TMP/health"
cat >reload.c <<'EOC'
#include "devlink.h"

static void pr_out_reload_data(struct dl *dl, struct nlattr **tb_reload)
{
	struct nlattr *tb[DEVLINK_ATTR_MAX + 1] = {};
	enum devlink_reload_action action;
	const struct nlattr *attr;
	int err;

	err = mnl_attr_parse_nested(tb_reload[DEVLINK_ATTR_RELOAD_STATS],
				    attr_cb, tb);
	if (err != MNL_CB_OK)
		return;
	pr_out_str(dl, "reload",
		   mnl_attr_get_str(tb[DEVLINK_ATTR_RELOAD_STATS_NAME]));
	action = mnl_attr_get_u8(tb[DEVLINK_ATTR_RELOAD_ACTION]);
	pr_out_str(dl, "action", reload_action_name(action));
}
EOC
git add reload.c; tick; git commit -q -m "devlink: show reload stats"
git format-patch -q -o "$TMP/reload" -1 HEAD
git reset -q --hard health
cat >police.c <<'EOC'
#include "devlink.h"

static void pr_out_trap_policer(struct dl *dl, struct nlattr **tb_policer)
{
	const char *policer_name;
	uint32_t policer_id;

	policer_name = mnl_attr_get_str(tb_policer[DEVLINK_ATTR_TRAP_POLICER_NAME]);
	policer_id = mnl_attr_get_u32(tb_policer[DEVLINK_ATTR_TRAP_POLICER_ID]);
	pr_out_str(dl, "name", policer_name);
	pr_out_uint(dl, "policer", policer_id);
	pr_out_bool(dl, "generic", !!tb_policer[DEVLINK_ATTR_TRAP_GENERIC]);
}
EOC
git add police.c; tick; git commit -q -m "devlink: show trap policers"
git format-patch -q -o "$TMP/police" -1 HEAD
git reset -q --hard health
run "$QUORUM" review -C "$TMP/health" "$TMP"/reload/*.patch
unlike "$TMP/out" "had to fix" "code like a definition a fix wrote a new function before has no history finding"
run "$QUORUM" review -C "$TMP/health" "$TMP"/police/*.patch
like "$TMP/out" "repeats, with other names, code that $(git rev-parse --short=12 "$TRAP_FIX") had to fix" \
	"... code like one whose first line a fix added a check to has"

# 3g. What the fix changed in a line must be in the patch's line: the
# tokens it replaced, or the two it inserted between. `struct sockstat
# stat = {` that opens an initializer going on is not `... = {};` whose
# braces a fix filled (iproute2 c759116a0b2b, for 99bb68ff666c); `- 1`
# after RDMA_NLDEV_ATTR_MAX corrects that constant, and the same
# callback with DEVLINK_ATTR_MAX, whose value is right, repeats nothing
# (b3adafd15431, for f0cabaca38e5). The empty initializer itself, and the
# callback with the same constant and other local names, are flagged.
cd "$TMP" && mkdir edits && cd edits && git init -q
cat >ss.c <<'EOC'
#include "ss.h"

static int unix_show_sock(struct nlmsghdr *nlh, void *arg)
{
	struct filter *f = (struct filter *)arg;
	struct unix_diag_msg *r = NLMSG_DATA(nlh);
	struct sockstat stat = {};

	stat.type = r->udiag_type;
	stat.state = r->udiag_state;
	unix_stats_print(&stat, f);
	return 0;
}
EOC
cat >utils.c <<'EOC'
#include "rdma.h"

int rd_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type;

	if (mnl_attr_type_valid(attr, RDMA_NLDEV_ATTR_MAX) < 0)
		return MNL_CB_OK;

	type = mnl_attr_get_type(attr);
	if (mnl_attr_validate(attr, nldev_policy[type]) < 0)
		return MNL_CB_ERROR;

	tb[type] = attr;
	return MNL_CB_OK;
}
EOC
tick; git add ss.c utils.c && git commit -q -m "ss, rdma: unix sockets, attributes"
SS=$(git rev-parse HEAD)
sed -i 's/struct sockstat stat = {};/struct sockstat stat = { .name = "*", .peer_name = "*" };/' ss.c
tick; git commit -q -am "ss: fix crash when dumping unix sockets" \
	-m "The printer reads the name.

$(fixes "$SS")"
SS_FIX=$(git rev-parse HEAD)
sed -i 's/RDMA_NLDEV_ATTR_MAX) < 0)/RDMA_NLDEV_ATTR_MAX - 1) < 0)/' utils.c
tick; git commit -q -am "rdma: fix incorrectly handled NLA validation" \
	-m "mnl_attr_type_valid() takes the maximum attribute type, not their number.

$(fixes "$SS")"
NLA_FIX=$(git rev-parse HEAD)
git tag edits
run "$QUORUM" index -C "$TMP/edits"
# add_patch NAME SUBJECT FILE: append stdin to FILE, format it, reset.
add_patch() {
	cat >>"$3"
	git add "$3"; tick; git commit -q -m "$2"
	git format-patch -q -o "$TMP/$1" -1 HEAD
	git reset -q --hard edits
}
add_patch vsock "ss: add AF_VSOCK support" ss.c <<'EOC'

static int vsock_show_sock(struct nlmsghdr *nlh, void *arg)
{
	struct filter *f = (struct filter *)arg;
	struct vsock_diag_msg *r = NLMSG_DATA(nlh);
	struct sockstat stat = {
		.type = r->vdiag_type,
		.state = r->vdiag_state,
	};

	vsock_stats_print(&stat, f);
	return 0;
}
EOC
add_patch packet "ss: packet sockets" ss.c <<'EOC'

static int packet_show_sock(struct nlmsghdr *nlh, void *arg)
{
	struct filter *f = (struct filter *)arg;
	struct packet_diag_msg *r = NLMSG_DATA(nlh);
	struct sockstat stat = {};

	stat.type = r->pdiag_type;
	packet_stats_print(&stat, f);
	return 0;
}
EOC
add_patch devattr "devlink: attribute callback" devlink.c <<'EOC'
#include "devlink.h"

int dl_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type;

	if (mnl_attr_type_valid(attr, DEVLINK_ATTR_MAX) < 0)
		return MNL_CB_OK;

	type = mnl_attr_get_type(attr);
	if (mnl_attr_validate(attr, devlink_policy[type]) < 0)
		return MNL_CB_ERROR;

	tb[type] = attr;
	return MNL_CB_OK;
}
EOC
add_patch resattr "rdma: resource attribute callback" res.c <<'EOC'
#include "rdma.h"

int res_attr_cb(const struct nlattr *nla, void *arg)
{
	const struct nlattr **attrs = arg;
	int t;

	if (mnl_attr_type_valid(nla, RDMA_NLDEV_ATTR_MAX) < 0)
		return MNL_CB_OK;

	t = mnl_attr_get_type(nla);
	if (mnl_attr_validate(nla, nldev_policy[t]) < 0)
		return MNL_CB_ERROR;

	attrs[t] = nla;
	return MNL_CB_OK;
}
EOC
run "$QUORUM" review -C "$TMP/edits" "$TMP"/vsock/*.patch
unlike "$TMP/out" "had to fix" "an initializer that goes on is not the empty one a fix filled"
run "$QUORUM" review -C "$TMP/edits" "$TMP"/packet/*.patch
like "$TMP/out" "resembles code that $(git rev-parse --short=12 "$SS_FIX") had to fix" "... the empty one is flagged"
run "$QUORUM" review -C "$TMP/edits" "$TMP"/devattr/*.patch
unlike "$TMP/out" "had to fix" "another constant where a fix adjusted one repeats nothing"
run "$QUORUM" review -C "$TMP/edits" "$TMP"/resattr/*.patch
like "$TMP/out" "repeats, with other names, code that $(git rev-parse --short=12 "$NLA_FIX") had to fix" \
	"... the same constant with other local names is flagged"

# 4. The rules voter. A file split in two moves its code: the moved lines
# are as old as the code (rdma-core 7237cedf3767 "Flatten the
# infiniband-diags tools", iproute2 e42256699cac "move into lib": 26
# findings on code that was only moved). A new allocation left unchecked
# is still flagged.
cd "$TMP" && mkdir rules && cd rules && git init -q
cat >opts.c <<'EOC'
#include <stdlib.h>
#include <string.h>

struct option *merge_opts(struct option *oldopts, int num_old)
{
	struct option *merge;

	merge = malloc(sizeof(*merge) * (num_old + 1));
	memcpy(merge, oldopts, num_old * sizeof(*merge));
	return merge;
}

int keep_opts(void)
{
	return 0;
}
EOC
tick; git add opts.c && git commit -q -m "opts: merge options"
git tag rbase
python3 - <<'EOP'
s = open("opts.c").read()
i = s.index("struct option *merge_opts")
j = s.index("int keep_opts")
open("merge.c", "w").write("#include <stdlib.h>\n#include <string.h>\n\n" + s[i:j])
open("opts.c", "w").write(s[:i] + s[j:])
EOP
git add merge.c; tick; git commit -q -am "opts: move merge_opts() to merge.c"
git format-patch -q -o "$TMP/moved" -1 HEAD
git reset -q --hard rbase
cat >>opts.c <<'EOC'

struct option *copy_opts(struct option *oldopts, int num_old)
{
	struct option *copy;

	copy = malloc(sizeof(*copy) * num_old);
	memcpy(copy, oldopts, num_old * sizeof(*copy));
	return copy;
}
EOC
tick; git commit -q -am "opts: add copy_opts()"
git format-patch -q -o "$TMP/newalloc" -1 HEAD
git reset -q --hard rbase

run "$QUORUM" review -C "$TMP/rules" "$TMP"/moved/*.patch
unlike "$TMP/out" "dereferenced without a NULL check" "moved code: no unchecked-allocation finding"
unlike "$TMP/out" "can overflow" "moved code: no overflow finding"
run "$QUORUM" review -C "$TMP/rules" "$TMP"/newalloc/*.patch
like "$TMP/out" 'malloc\(\) result `copy` is dereferenced without a NULL check' \
	"a new unchecked allocation is still flagged"

# A patch that only rewrites an allocation its pre-image used unchecked
# just the same (iproute2 f89bb0210fcf "Replace malloc && memset by
# calloc") adds no defect; one that drops the check adds one.
cat >graph.c <<'EOC'
#include <stdlib.h>
#include <string.h>

void graph_node_add(unsigned int parent_id, unsigned int id)
{
	struct graph_node *node = malloc(sizeof(struct graph_node));

	memset(node, 0, sizeof(*node));
	node->id = id;
	node->parent_id = parent_id;
	graph_insert(node);
}

int graph_edge_add(unsigned int from, unsigned int to)
{
	struct graph_edge *edge = malloc(sizeof(struct graph_edge));

	if (!edge)
		return -1;
	edge->from = from;
	edge->to = to;
	return graph_link(edge);
}
EOC
git add graph.c; tick; git commit -q -m "graph: add nodes and edges"
git tag gbase
python3 - <<'EOP'
s = open("graph.c").read()
s = s.replace("""malloc(sizeof(struct graph_node));

	memset(node, 0, sizeof(*node));""", """calloc(1, sizeof(struct graph_node));
""")
open("graph.c", "w").write(s)
EOP
tick; git commit -q -am "graph: replace malloc and memset by calloc"
git format-patch -q -o "$TMP/calloc" -1 HEAD
git reset -q --hard gbase
python3 - <<'EOP'
s = open("graph.c").read()
s = s.replace("""malloc(sizeof(struct graph_edge));

	if (!edge)
		return -1;""", """calloc(1, sizeof(struct graph_edge));
""")
open("graph.c", "w").write(s)
EOP
tick; git commit -q -am "graph: calloc edges, drop the check"
git format-patch -q -o "$TMP/dropcheck" -1 HEAD
git reset -q --hard gbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/calloc/*.patch
unlike "$TMP/out" 'result `node` is dereferenced' "rewriting an allocation used unchecked before adds no finding"
run "$QUORUM" review -C "$TMP/rules" "$TMP"/dropcheck/*.patch
like "$TMP/out" 'calloc\(\) result `edge` is dereferenced without a NULL check' \
	"... dropping the check is still flagged"

# A rewritten size product, the same allocation with a factor renamed
# (rdma-core 057157951eb1: bucket->num_of_entries became
# chunk->num_of_entries), is as old as the code; a new one is flagged.
cat >pool.c <<'EOC'
#include <stdlib.h>

int chunk_init(struct chunk *chunk, struct bucket *bucket)
{
	chunk->miss_list = malloc(bucket->num_of_entries *
				  sizeof(struct list_head));
	if (!chunk->miss_list)
		return -1;
	return 0;
}
EOC
git add pool.c; tick; git commit -q -m "pool: chunks"
git tag pbase
sed -i 's/malloc(bucket->num_of_entries \*/malloc(chunk->num_of_entries */' pool.c
tick; git commit -q -am "pool: size the miss list by the chunk"
git format-patch -q -o "$TMP/product" -1 HEAD
git reset -q --hard pbase
python3 - <<'EOP'
s = open("pool.c").read()
s = s.replace("""	return 0;
}""", """	chunk->ste_arr = malloc(chunk->num_of_entries *
				sizeof(struct ste));
	if (!chunk->ste_arr)
		return -1;
	return 0;
}""")
open("pool.c", "w").write(s)
EOP
tick; git commit -q -am "pool: an array of STEs per chunk"
git format-patch -q -o "$TMP/newproduct" -1 HEAD
git reset -q --hard pbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/product/*.patch
unlike "$TMP/out" "can overflow" "a rewritten size product adds no finding"
run "$QUORUM" review -C "$TMP/rules" "$TMP"/newproduct/*.patch
like "$TMP/out" 'malloc\(chunk->num_of_entries\*sizeof\(struct ste\)\) can overflow' \
	"... a new one is flagged"

# 5. Strings sized or checked for what they hold (iproute2 6217917a3826:
# `char strbuf[rem * 2 + 1]`; 93c8d5f72f8c: strcpy() after
# `if (strlen(str) > XATTR_SIZE_MAX) return -1;`; a56e0db7e892:
# sprintf(full_state[17], "%s%c", addr_str[16], state)), and the
# unbounded ones that are still flagged.
cat >str.c <<'EOC'
#include <stdio.h>
#include <string.h>

int hex_opt(const char *data, int rem)
{
	char strbuf[rem * 2 + 1];

	sprintf(strbuf, "%s", data);
	return puts(strbuf);
}

int key_opt(const char *str)
{
	char key[KEY_SIZE_MAX];

	if (strlen(str) >= KEY_SIZE_MAX)
		return -1;
	strcpy(key, str);
	return puts(key);
}

int name_opt(const char *str)
{
	char name[16];

	sprintf(name, "%s", str);
	return puts(name);
}

int state_opt(unsigned int member, char state)
{
	char addr_str[16];
	char full_state[17] = {0};

	sprintf(addr_str, "%x:", member);
	sprintf(full_state, "%s%c", addr_str, state);
	return puts(full_state);
}

int label_opt(const char *str, char state)
{
	char label[32];
	char full_label[17] = {0};

	snprintf(label, sizeof(label), "%s", str);
	sprintf(full_label, "%s%c", label, state);
	return puts(full_label);
}

int alias_opt(const char *str)
{
	char alias[32];

	if (!str)
		return -1;
	strcpy(alias, str);
	return puts(alias);
}
EOC
git add str.c; tick; git commit -q -m "str: add options"
git format-patch -q -o "$TMP/strings" -1 HEAD
git reset -q --hard rbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/strings/*.patch
unlike "$TMP/out" 'into fixed-size `strbuf`' "an array sized at run time for its content is not fixed-size"
unlike "$TMP/out" 'into fixed-size `key`' "a copy after a strlen() test of its source is bounded"
unlike "$TMP/out" 'into `full_state' "sprintf() of arrays that fit the buffer (15 + 1 + NUL in 17) is bounded"
like "$TMP/out" 'sprintf\(\) into `full_label\[17\]` has no bound' "... of a larger array, flagged"
like "$TMP/out" 'sprintf\(\) into `name\[16\]` has no bound' "an unbounded sprintf() into a fixed array is flagged"
like "$TMP/out" 'strcpy\(\) into `alias\[32\]` has no bound' "an unbounded strcpy() into one too"

# 6. `sizeof *p` is the size of what p points at, not a product: every
# allocation written `malloc(sizeof *req)` was flagged as an overflow
# (rdma-core 05fc15b44805, a73f7df2ac93 "cmtime", and the rxe provider's
# ten). A count times `sizeof *p` is still a product (rdma-core
# 1b9125689fec, fixed later).
cat >req.c <<'EOC'
#include <stdlib.h>

struct request *req_alloc(void)
{
	struct request *req;

	req = malloc(sizeof *req);
	if (!req)
		return NULL;
	return req;
}

int ports_alloc(struct cma_dev *cma_dev, struct attr attr)
{
	cma_dev->port = malloc(sizeof *cma_dev->port * attr.phys_port_cnt);
	if (!cma_dev->port)
		return -1;
	return 0;
}
EOC
git add req.c; tick; git commit -q -m "req: allocate requests and ports"
git format-patch -q -o "$TMP/sizeofstar" -1 HEAD
git reset -q --hard rbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/sizeofstar/*.patch
unlike "$TMP/out" 'malloc\(sizeof\*req\)' "sizeof *p is no size product"
like "$TMP/out" 'malloc\(sizeof\*cma_dev->port\*attr.phys_port_cnt\) can overflow' \
	"... a count times sizeof *p still is"

# 7. A copy after a test of the sum of lengths it makes is bounded
# (iproute2 f6793eec4600: `if (strlen(tmp) + strlen(sub) + 2 > PATH_MAX)
# return -EINVAL; strcat(tmp, sub);`); one with no such test is not.
cat >path.c <<'EOC'
#include <limits.h>
#include <string.h>

int make_path(const char *sub)
{
	char tmp[PATH_MAX];

	tmp[0] = '\0';
	if (strlen(tmp) + strlen(sub) + 2 > PATH_MAX)
		return -1;
	strcat(tmp, sub);
	return mkdir(tmp, 0700);
}

int make_dir(const char *dir)
{
	char where[PATH_MAX];

	where[0] = '\0';
	if (strlen(where) > 2)
		return -1;
	strcat(where, dir);
	return mkdir(where, 0700);
}
EOC
git add path.c; tick; git commit -q -m "path: make directories"
git format-patch -q -o "$TMP/sumtest" -1 HEAD
git reset -q --hard rbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/sumtest/*.patch
unlike "$TMP/out" 'into fixed-size `tmp`' "a copy after a test of strlen(dst) + strlen(src) is bounded"
like "$TMP/out" 'strcat\(\) into fixed-size `where` has no bound' \
	"... one whose source length is not tested is flagged"

# 8. A new array of as many entries as one the file already allocates
# trusts that count as the code did (rdma-core 3ad1d4c0fe33: wr_data of
# qp->sq.wqe_cnt entries beside wrid, allocated by the same product for
# years); an array by a count the file never allocated by is flagged.
cat >qp.c <<'EOC'
#include <stdlib.h>

int qp_alloc_buf(struct qp *qp)
{
	qp->sq.wrid = malloc(qp->sq.wqe_cnt * sizeof(*qp->sq.wrid));
	if (!qp->sq.wrid)
		return -1;

	qp->sq.wqe_head = calloc(1, sizeof(*qp->sq.wqe_head));
	if (!qp->sq.wqe_head)
		return -1;

	qp->buf_size = qp->sq.offset + qp->sq.size;
	qp->ready = 1;
	return 0;
}
EOC
git add qp.c; tick; git commit -q -m "qp: buffers"
git tag qbase
python3 - <<'EOP'
s = open("qp.c").read()
s = s.replace("""	qp->ready = 1;""", """	qp->sq.wr_data = malloc(qp->sq.wqe_cnt * sizeof(*qp->sq.wr_data));
	if (!qp->sq.wr_data)
		return -1;
	qp->ready = 1;""")
open("qp.c", "w").write(s)
EOP
tick; git commit -q -am "qp: a software context per send WQE"
git format-patch -q -o "$TMP/samecount" -1 HEAD
git reset -q --hard qbase
python3 - <<'EOP'
s = open("qp.c").read()
s = s.replace("""	qp->ready = 1;""", """	qp->rq.wrid = malloc(qp->rq.wqe_cnt * sizeof(uint64_t));
	if (!qp->rq.wrid)
		return -1;
	qp->ready = 1;""")
open("qp.c", "w").write(s)
EOP
tick; git commit -q -am "qp: receive WR ids"
git format-patch -q -o "$TMP/newcount" -1 HEAD
git reset -q --hard qbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/samecount/*.patch
unlike "$TMP/out" "can overflow" "an array by a count the file already allocates by adds no overflow"
run "$QUORUM" review -C "$TMP/rules" "$TMP"/newcount/*.patch
like "$TMP/out" 'malloc\(qp->rq.wqe_cnt\*sizeof\(uint64_t\)\) can overflow' \
	"... one by a new count is flagged"

# 9. An array grown by one entry at a time, realloc((n + 1) * size),
# reaches each count one entry after it was allocated: no product wraps
# before memory runs out (rdma-core aac8d6f8b1b5, a config line at a
# time). A realloc() to a count read from elsewhere is flagged.
cat >conf.c <<'EOC'
#include <stdlib.h>

int conf_add(struct conf *conf, const char *line)
{
	struct entry *new_entries;

	new_entries = realloc(conf->entries, (conf->cnt + 1) *
					     sizeof(struct entry));
	if (!new_entries)
		return -1;
	conf->entries = new_entries;
	return entry_parse(&conf->entries[conf->cnt++], line);
}

int conf_resize(struct conf *conf, unsigned int want)
{
	struct entry *new_entries;

	new_entries = realloc(conf->entries, want * sizeof(struct entry));
	if (!new_entries)
		return -1;
	conf->entries = new_entries;
	return 0;
}
EOC
git add conf.c; tick; git commit -q -m "conf: entries"
git format-patch -q -o "$TMP/growone" -1 HEAD
git reset -q --hard rbase
run "$QUORUM" review -C "$TMP/rules" "$TMP"/growone/*.patch
unlike "$TMP/out" 'realloc\(\(conf->cnt\+1\)' "an array grown by one entry adds no overflow"
like "$TMP/out" 'realloc\(want\*sizeof\(struct entry\)\) can overflow' \
	"... a realloc() to a count from elsewhere is flagged"

done_testing
