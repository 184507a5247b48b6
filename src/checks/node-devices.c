/*
 * On-node Neuron and EFA devices: Neuron devices from neuron-ls against
 * the instance type's NeuronInfo, and EFA devices (/dev/infiniband uverbs)
 * against NetworkInfo.EfaInfo.MaximumEfaInterfaces, their port states and
 * the libfabric EFA provider. Expectations come from the instance type
 * (or the PCI bus), never from a list kept in hpnode.
 */
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"
#include "node.h"

static void judge_neuron(struct node_ctx *c)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(c->facts, "neuron");
	int want = hp_node_type_neuron_devices(c);
	double have = hp_json_num(n, "devices", -1), cores = hp_json_num(n, "cores", 0);
	int loaded = hp_json_bool(c->facts, "modules.neuron", -1);

	if (!n)
		return;
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(n, "present"))) {
		if (want > 0)
			hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "neuron-ls not found on Neuron nodes",
				    "neuron-ls not found on %s, which has %d Neuron devices (%s); "
				    "install aws-neuronx-tools", c->who, want, c->type);
		else if (!c->type_info)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "No Neuron devices",
				    "No Neuron devices on %s (neuron-ls not installed)", c->who);
		return;
	}
	if (have < 0) {
		hp_node_say(c, want > 0 ? HP_TAG_FAIL : HP_TAG_INFO, want > 0 ? HP_P1 : HP_PNONE,
			    want > 0 ? NULL : "", "neuron-ls failed", "neuron-ls failed on %s: %s",
			    c->who, hp_check_str(n, "error", "no device table"));
		return;
	}
	if (want > 0 && have < want)
		hp_node_say(c, HP_TAG_FAIL, HP_P0, NULL, "Neuron devices missing",
			    "Neuron devices %.0f of %d on %s (%s)%s", have, want, c->who, c->type,
			    have == 0 && loaded == 0 ? ": the neuron driver is not loaded" : "");
	else if (want > 0)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "All Neuron devices visible",
			    "%.0f of %d Neuron devices (%.0f cores) visible on %s", have, want, cores,
			    c->who);
	else
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "Neuron devices visible",
			    "%.0f Neuron devices (%.0f cores) on %s", have, cores, c->who);
}

static void judge_ports(struct node_ctx *c)
{
	const cJSON *p;
	struct hp_buf down = HP_BUF_INIT(HP_MAX_LINE);
	int n = 0;

	cJSON_ArrayForEach(p, hp_json_arr(c->facts, "efa.ports")) {
		const char *st = hp_check_str(p, "state", "unknown");

		if (!strcmp(st, "ACTIVE"))
			continue;
		n++;
		if (n <= 8)
			hp_buf_printf(&down, "%s%.40s/%.8s %.20s", down.len ? ", " : "",
				      hp_check_str(p, "device", "?"), hp_check_str(p, "port", "?"), st);
	}
	if (n)
		hp_node_say(c, HP_TAG_WARN, HP_P1, "A.2", "EFA ports not active",
			    "%d EFA port%s not active on %s: %s%s", n, n == 1 ? "" : "s", c->who,
			    down.buf, n > 8 ? ", \xE2\x80\xA6" : "");
	hp_buf_release(&down);
}

static void judge_provider(struct node_ctx *c)
{
	const cJSON *fi = hp_json_get(c->facts, "efa.fi_info");

	if (!fi)
		return;
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(fi, "present")))
		hp_node_say(c, HP_TAG_WARN, HP_P2, "A.2", "fi_info not found",
			    "fi_info not found on %s; the libfabric EFA provider was not checked "
			    "(EFA software in /opt/amazon/efa missing?)", c->who);
	else if (hp_json_num(fi, "efa_providers", 0) > 0)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, "A.2", "libfabric EFA provider present",
			    "libfabric EFA provider present on %s", c->who);
	else
		hp_node_say(c, HP_TAG_FAIL, HP_P1, "A.2", "No libfabric EFA provider",
			    "libfabric offers no EFA provider on %s: %s", c->who,
			    hp_check_str(fi, "error", "fi_info -p efa listed nothing"));
}

static void judge_efa(struct node_ctx *c)
{
	const cJSON *efa = cJSON_GetObjectItemCaseSensitive(c->facts, "efa");
	int want = hp_node_type_efa(c);
	double have = hp_json_num(efa, "uverbs", -1), pci = hp_json_num(c->facts, "pci.efa", -1);
	char what[96] = "";
	struct node_say *s;

	if (!efa || have < 0)
		return;
	if (want >= 0)
		snprintf(what, sizeof(what), "%s supports %d", c->type, want);
	else if (pci > 0) {
		want = (int)pci;
		snprintf(what, sizeof(what), "%d EFA interfaces on the PCI bus", want);
	}
	if (want == 0)
		return;
	if (want < 0) {
		if (have > 0)
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "EFA devices present",
				    "%.0f EFA devices on %s (no instance type data to compare with)",
				    have, c->who);
		else
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "No EFA devices",
				    "No EFA devices on %s (/dev/infiniband %s)", c->who,
				    cJSON_IsTrue(hp_json_get(efa, "dev_read")) ? "is empty" : "is absent");
		return;
	}
	if (have == 0) {
		s = hp_node_say(c, HP_TAG_FAIL, HP_P1, NULL, "No EFA devices",
				"No EFA devices on %s (%s): /dev/infiniband is %s", c->who, what,
				cJSON_IsTrue(hp_json_get(efa, "dev_read")) ? "empty" : "missing");
		if (hp_json_bool(c->facts, "modules.efa", -1) == 0)
			hp_node_evidence(s, "the efa kernel module is not loaded");
	} else if (have < want) {
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "EFA devices missing",
			    "EFA devices %.0f of %d on %s (%s); collectives lose bandwidth or hang",
			    have, want, c->who, what);
	} else {
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "All EFA devices present",
			    "%.0f of %d EFA device%s present on %s", have, want, want == 1 ? "" : "s",
			    c->who);
	}
	judge_ports(c);
	judge_provider(c);
}

/* Drops above this share of the packets, and at least DROP_MIN of them, warn. */
#define DROP_PCT 1.0
#define DROP_MIN 1000.0

static void judge_netdev(struct node_ctx *c)
{
	const cJSON *i;
	struct hp_buf errs = HP_BUF_INIT(HP_MAX_LINE), drops = HP_BUF_INIT(HP_MAX_LINE);
	int n = 0;

	cJSON_ArrayForEach(i, hp_json_arr(c->facts, "netdev.interfaces")) {
		const char *name = hp_check_str(i, "name", "?");
		double rxe = hp_json_num(i, "rx_errors", -1), txe = hp_json_num(i, "tx_errors", -1);
		double rxd = hp_json_num(i, "rx_dropped", 0), txd = hp_json_num(i, "tx_dropped", 0);
		double pk = hp_json_num(i, "rx_packets", 0) + hp_json_num(i, "tx_packets", 0);

		if (rxe < 0 || txe < 0)
			continue;
		n++;
		if (rxe > 0 || txe > 0)
			hp_buf_printf(&errs, "%s%.40s RX errors %.0f, TX errors %.0f", errs.len ? "; " : "",
				      name, rxe, txe);
		if (rxd + txd >= DROP_MIN && pk > 0 && (rxd + txd) * 100 / pk > DROP_PCT)
			hp_buf_printf(&drops, "%s%.40s RX dropped %.0f, TX dropped %.0f of %.0f packets",
				      drops.len ? "; " : "", name, rxd, txd, pk);
	}
	if (errs.len)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "Network interface errors since boot",
			    "Network interface errors on %s since boot: %s; compare two readings a few "
			    "minutes apart to see whether they grow", c->who, errs.buf);
	if (drops.len)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "Network interface drops over 1%",
			    "Network interface drops over 1%% on %s since boot: %s", c->who, drops.buf);
	if (n && !errs.len && !drops.len)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "No network interface errors",
			    "No RX/TX errors and few drops on %d network interface%s of %s", n,
			    n == 1 ? "" : "s", c->who);
	hp_buf_release(&errs);
	hp_buf_release(&drops);
}

static void judge_imds(struct node_ctx *c)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c->facts, "imds");
	const char *type = hp_json_str(d, "instance_type");

	if (!d || cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(d, "present")))
		return;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "token")))
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "IMDS unreachable from the node",
			    "IMDS unreachable from %s: no IMDSv2 token within 1 s (curl exit status "
			    "%.0f); the instance role's credentials come from there", c->who,
			    hp_json_num(d, "curl", -1));
	else if (!type)
		hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "IMDS answered without metadata",
			    "IMDS gave a token on %s but no instance type (curl exit status %.0f)",
			    c->who, hp_json_num(d, "curl", -1));
	else
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "IMDS reachable from the node",
			    "IMDS reachable from %s (IMDSv2, instance type %.40s)", c->who, type);
}

/* "x8 of x16 at 16.0 of 32.0 GT/s" for a link, unknown parts as "?". */
static void link_text(const cJSON *l, char *out, size_t n)
{
	double cw = hp_json_num(l, "cur_width", -1), mw = hp_json_num(l, "max_width", -1);
	double cs = hp_json_num(l, "cur_speed", -1), ms = hp_json_num(l, "max_speed", -1);
	char a[16] = "?", b[16] = "?", c[16] = "?", d[16] = "?";

	if (cw > 0)
		snprintf(a, sizeof(a), "%.0f", cw);
	if (mw > 0)
		snprintf(b, sizeof(b), "%.0f", mw);
	if (cs > 0)
		snprintf(c, sizeof(c), "%.1f", cs);
	if (ms > 0)
		snprintf(d, sizeof(d), "%.1f", ms);
	snprintf(out, n, "x%s of x%s at %s of %s GT/s", a, b, c, d);
}

static void judge_pcie_link(struct node_ctx *c)
{
	const cJSON *links = hp_json_arr(c->facts, "pci_links"), *l;
	struct hp_buf narrow = HP_BUF_INIT(HP_MAX_LINE), slow = HP_BUF_INIT(HP_MAX_LINE),
		      unread = HP_BUF_INIT(HP_MAX_LINE);
	int n = 0, nnarrow = 0, nslow = 0, nunread = 0, slow_efa = 0;

	if (!links || !cJSON_GetArraySize(links))
		goto out;
	cJSON_ArrayForEach(l, links) {
		double cw = hp_json_num(l, "cur_width", -1), mw = hp_json_num(l, "max_width", -1);
		double cs = hp_json_num(l, "cur_speed", -1), ms = hp_json_num(l, "max_speed", -1);
		const char *kind = hp_check_str(l, "kind", "device"), *pci = hp_check_str(l, "pci", "?");
		char text[96];

		n++;
		link_text(l, text, sizeof(text));
		if (cw <= 0 || mw <= 0 || cs <= 0 || ms <= 0) {
			nunread++;
			hp_buf_printf(&unread, "%s%s %.16s", unread.len ? ", " : "", kind, pci);
		}
		if (cw > 0 && mw > 0 && cw < mw) {
			nnarrow++;
			hp_buf_printf(&narrow, "%s%s %.16s (%s)", narrow.len ? ", " : "", kind, pci, text);
		} else if (cs > 0 && ms > 0 && cs < ms) {
			nslow++;
			slow_efa |= !strcmp(kind, "EFA device");
			hp_buf_printf(&slow, "%s%s %.16s (%s)", slow.len ? ", " : "", kind, pci, text);
		}
	}
	if (nnarrow)
		hp_node_say(c, HP_TAG_WARN, HP_P1, NULL, "PCIe link trained narrower than its maximum",
			    "PCIe link narrower than the device supports on %s: %s; the link lost lanes "
			    "(a seating, riser or retimer fault), so transfers to and from the device run "
			    "at a fraction of their bandwidth", c->who, narrow.buf);
	if (nslow) {
		if (slow_efa)
			hp_node_say(c, HP_TAG_WARN, HP_P2, NULL, "PCIe link slower than its maximum",
					"PCIe link slower than the device supports on %s: %s; read it again "
					"under load: a link that stays below its maximum speed trained down",
					c->who, slow.buf);
		else
			hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "GPU PCIe link below maximum speed",
					"GPU PCIe link below its maximum speed on %s: %s; idle GPUs lower "
					"their link speed to save power, so only a link that stays slow "
					"under load has trained down", c->who, slow.buf);
	}
	if (nunread)
		hp_node_say(c, HP_TAG_INFO, HP_PNONE, "", "PCIe link state not readable",
			    "PCIe link state not readable in sysfs on %s for %d device%s (%s); their "
			    "links are not judged", c->who, nunread, nunread == 1 ? "" : "s", unread.buf);
	else if (!nnarrow && !nslow)
		hp_node_say(c, HP_TAG_PASS, HP_PNONE, NULL, "PCIe links at full width and speed",
			    "PCIe links of %d GPU and EFA device%s on %s at their full width and speed",
			    n, n == 1 ? "" : "s", c->who);
out:
	hp_buf_release(&narrow);
	hp_buf_release(&slow);
	hp_buf_release(&unread);
}

HP_CHECK(node_neuron, HP_GROUP_ONNODE, 260,
	 .id = "node.neuron", .section = "G.2", .prio = HP_P0, .each_node = judge_neuron);
HP_CHECK(node_efa, HP_GROUP_ONNODE, 270,
	 .id = "node.efa", .section = "A.3", .prio = HP_P1, .each_node = judge_efa);
HP_CHECK(node_net_errors, HP_GROUP_ONNODE, 280,
	 .id = "node.net-errors", .section = "A.2", .prio = HP_P2, .each_node = judge_netdev);
HP_CHECK(node_imds, HP_GROUP_ONNODE, 290,
	 .id = "node.imds", .section = "B.1", .prio = HP_P1, .each_node = judge_imds);
HP_CHECK(node_pcie_link, HP_GROUP_ONNODE, 275,
	 .id = "node.pcie-link", .section = "G.4", .prio = HP_P1, .each_node = judge_pcie_link);
