/*
 * The embedded reference documents, read a second way: one heading per
 * section id with a title, in order, the titles the lookup gives (the
 * document is the one source of them), pointers that resolve, and the
 * conventions around commands. A fenced block right after a line starting
 * "**Suggested command (run this yourself)**" must hold a command that
 * changes something, followed (before the next block, marker or heading) by
 * a "Blast radius:" line, and by an "IaC note:" line when the command
 * changes cluster, VPC, security group, subnet, IAM, EKS or Kubernetes
 * configuration. Every other fenced block must be read-only. The command
 * classifier below is a small shell word splitter, not a shell parser.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hp/refdoc.h"
#include "hp/util.h"
#include "hp_refdoc.h"
#include "t.h"

#define DETAIL "node-diagnostics-detail.md"
#define CATALOG "node-issue-catalog.md"
#define NCCL "nccl-diagnostics-detail.md"
#define MARKER "**Suggested command (run this yourself)**"
#define SECT "\xC2\xA7" /* the section sign, UTF-8 */

/* What a command does, as bits. */
#define CMD_MUTATES 1 /* changes state somewhere */
#define CMD_IAC 2     /* changes configuration that IaC usually owns */

#define MAX_WORDS 64

/* One document split into lines (in place), with fence and heading marks. */
struct doc {
	const char *name;
	char *store;
	char **line;
	size_t n;
	unsigned char *code; /* 1: a fence line or inside a fenced block */
};

/* One fenced block: the fence lines and whether a marker introduced it. */
struct block {
	size_t open, close;
	int suggested;
};

/* ---- documents ---- */

static const char *refdoc_text(const char *name)
{
	size_t i;

	for (i = 0; hp_refdocs[i].name; i++)
		if (!strcmp(hp_refdocs[i].name, name))
			return (const char *)hp_refdocs[i].text;
	return NULL;
}

static int is_fence(const char *l)
{
	return !strncmp(l, "```", 3);
}

static void doc_load(struct doc *d, const char *name)
{
	const char *text = refdoc_text(name);
	size_t alloc = 64, i;
	char *p;
	int in = 0;

	if (!text)
		T_FAILF("reference document '%s' is not embedded", name);
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->store = xstrdup(text);
	d->line = xmalloc(alloc * sizeof(*d->line));
	for (p = d->store; p; ) {
		char *nl = strchr(p, '\n');

		if (d->n == alloc) {
			alloc *= 2;
			d->line = xrealloc(d->line, alloc * sizeof(*d->line));
		}
		d->line[d->n++] = p;
		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : NULL;
	}
	d->code = xmalloc(d->n);
	for (i = 0; i < d->n; i++) {
		if (is_fence(d->line[i])) {
			d->code[i] = 1;
			in = !in;
		} else {
			d->code[i] = (unsigned char)in;
		}
	}
	if (in)
		T_FAILF("%s: a fenced block is never closed", name);
}

static void doc_free(struct doc *d)
{
	free(d->store);
	free(d->line);
	free(d->code);
}

static int is_heading(const struct doc *d, size_t i)
{
	return !d->code[i] && d->line[i][0] == '#';
}

static int is_blank(const char *l)
{
	while (*l && isspace((unsigned char)*l))
		l++;
	return !*l;
}

/*
 * Parse an id such as "A", "B.1" or "G.1.a" (node guide), or "NC13",
 * "NC17.1" (NCCL guide) at s; returns its length, or 0. depth gets the
 * number of dots.
 */
static size_t parse_id(const char *s, int *depth)
{
	size_t n = 0;

	*depth = 0;
	if (s[0] == 'N' && s[1] == 'C' && isdigit((unsigned char)s[2])) {
		n = 2;
		while (isdigit((unsigned char)s[n]))
			n++;
		if (s[n] == '.' && isdigit((unsigned char)s[n + 1])) {
			n++;
			while (isdigit((unsigned char)s[n]))
				n++;
			*depth = 1;
		}
		return isalnum((unsigned char)s[n]) ? 0 : n;
	}
	if (s[n] < 'A' || s[n] > 'Z')
		return 0;
	n++;
	if (s[n] == '.' && isdigit((unsigned char)s[n + 1])) {
		n++;
		while (isdigit((unsigned char)s[n]))
			n++;
		*depth = 1;
		if (s[n] == '.' && s[n + 1] >= 'a' && s[n + 1] <= 'z' &&
		    !isalnum((unsigned char)s[n + 2])) {
			n += 2;
			*depth = 2;
		}
	}
	if (isalnum((unsigned char)s[n]))
		return 0;
	return n;
}

/*
 * A heading "## <ID>: <Title>": fills id, level (number of '#') and title;
 * returns 0 for any other line.
 */
static int id_heading(const struct doc *d, size_t i, char *id, size_t idsz, int *level,
		      const char **title)
{
	const char *l = d->line[i];
	int hashes = 0, depth;
	size_t n;

	if (!is_heading(d, i))
		return 0;
	while (l[hashes] == '#')
		hashes++;
	if (l[hashes] != ' ')
		return 0;
	l += hashes + 1;
	n = parse_id(l, &depth);
	if (!n || l[n] != ':' || l[n + 1] != ' ' || n >= idsz)
		return 0;
	memcpy(id, l, n);
	id[n] = '\0';
	*level = hashes;
	*title = l + n + 2;
	return 1;
}

/* Collect the fenced blocks of d; marker lines must introduce a block. */
static size_t doc_blocks(const struct doc *d, struct block **out)
{
	struct block *v = NULL;
	size_t n = 0, alloc = 0, i, j;
	int pending = 0;

	for (i = 0; i < d->n; i++) {
		if (!d->code[i] && !strncmp(d->line[i], MARKER, strlen(MARKER))) {
			for (j = i + 1; j < d->n && is_blank(d->line[j]); j++)
				;
			if (j == d->n || !is_fence(d->line[j]))
				T_FAILF("%s:%zu: marker not followed by a fenced block", d->name,
					i + 1);
			pending = 1;
			continue;
		}
		if (!is_fence(d->line[i]))
			continue;
		if (n == alloc) {
			alloc = alloc ? alloc * 2 : 32;
			v = xrealloc(v, alloc * sizeof(*v));
		}
		v[n].open = i;
		for (i++; i < d->n && !is_fence(d->line[i]); i++)
			;
		v[n].close = i;
		v[n].suggested = pending;
		pending = 0;
		n++;
	}
	*out = v;
	return n;
}

/* ---- command classification ---- */

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static int prefix_in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (hp_starts_with(s, *list))
			return 1;
	return 0;
}

static int is_assignment(const char *w)
{
	const char *p = w;

	if (!isalpha((unsigned char)*p) && *p != '_')
		return 0;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	return *p == '=';
}

static int any_word(char **w, size_t n, const char *const *list, int prefix)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (prefix ? prefix_in_list(w[i], list) : in_list(w[i], list))
			return 1;
	return 0;
}

/* The classification of one simple command, given as words. */
static int classify_words(char **w, size_t n)
{
	static const char *const skip[] = { "sudo", "env", "do", "then", "else", "!", "time",
					    "nohup", NULL };
	static const char *const aws_mut[] = {
		"update-", "authorize-", "revoke-", "modify-", "create-", "delete-",
		"batch-reboot", "batch-replace", "attach-", "detach-", "put-", "associate-",
		"disassociate-", "replace-", "reboot-", "terminate-", "stop-", "request-",
		"tag-", "untag-", NULL
	};
	static const char *const aws_iac_svc[] = { "ec2", "eks", "iam", NULL };
	static const char *const sm_iac[] = { "update-", "create-", "delete-", NULL };
	static const char *const s3_mut[] = { "cp", "mv", "rm", "sync", "rb", "mb", NULL };
	static const char *const kube_ro[] = { "get", "describe", "logs", "top", "explain",
					       "version", "api-resources", "api-versions",
					       "cluster-info", "auth", NULL };
	static const char *const kube_runtime[] = { "exec", "cp", "port-forward", "debug",
						    "attach", NULL };
	static const char *const helm_mut[] = { "install", "upgrade", "uninstall", "delete",
						"rollback", NULL };
	static const char *const ipt_mut[] = { "-A", "-I", "-D", "-R", "-F", "-X", "-P", "-N",
					       "--append", "--insert", "--delete", "--flush", NULL };
	static const char *const nft_mut[] = { "add", "insert", "delete", "flush", "replace",
					       "create", "destroy", "-f", NULL };
	static const char *const ip_mut[] = { "set", "add", "del", "delete", "flush", "replace",
					      NULL };
	static const char *const pods[] = { "pod", "pods", "po", NULL };
	static const char *const unit_mut[] = { "start", "stop", "restart", "reload",
						"try-restart", "enable", "disable", "kill",
						"mask", "unmask", "daemon-reload", "reboot",
						"poweroff", "isolate", NULL };
	static const char *const slurm_mut[] = { "update", "reboot", "delete", "create",
						 "reconfigure", "shutdown", "takeover", NULL };
	static const char *const plain_mut[] = { "reboot", "shutdown", "poweroff", "halt",
						 "modprobe", "rmmod", "rm", "mv", "tee",
						 "mkdir", "dos2unix", "mount", "umount", "dd",
						 "pkill", "kill", "killall", "export", "truncate",
						 "mkfs", "wipefs", "mdadm", NULL };
	static const char *const pkg_mut[] = { "install", "remove", "purge", "clean",
					       "upgrade", "update", "autoremove", "erase",
					       "uninstall", "cache", "reinstall", NULL };
	static const char *const pkg_tools[] = { "apt-get", "apt", "yum", "dnf", "pip",
						 "pip3", "brew", NULL };
	static const char *const ctr_ro[] = { "ps", "logs", "images", "inspect", "inspecti",
					      "info", "version", "stats", "pods", NULL };
	static const char *const clock_mut[] = { "makestep", "burst", "settime", "offline",
						 "online", NULL };
	static const char *const vacuum[] = { "--vacuum", "--rotate", NULL };
	static const char *const gpu_reset[] = { "-r", "--gpu-reset", NULL };
	static const char *const find_del[] = { "-delete", NULL };
	static const char *const sed_inplace[] = { "-i", NULL };
	static const char *const sysctl_mut[] = { "-w", "-p", "--write", "--load", "--system",
						  NULL };
	static const char *const dpkg_mut[] = { "-i", "--install", "-r", "--remove", "-P",
						"--purge", NULL };
	const char *cmd, *a1, *a2;
	size_t i = 0;

	while (i < n && (is_assignment(w[i]) || in_list(w[i], skip))) {
		if (!strcmp(w[i], "sudo"))
			while (i + 1 < n && w[i + 1][0] == '-')
				i++;
		i++;
	}
	if (i >= n)
		return 0;
	cmd = w[i];
	a1 = i + 1 < n ? w[i + 1] : "";
	a2 = i + 2 < n ? w[i + 2] : "";
	w += i;
	n -= i;

	if (!strcmp(cmd, "aws")) {
		if (!strcmp(a1, "s3"))
			return in_list(a2, s3_mut) ? CMD_MUTATES : 0;
		if (!prefix_in_list(a2, aws_mut))
			return 0;
		if (in_list(a1, aws_iac_svc) ||
		    (!strcmp(a1, "sagemaker") && prefix_in_list(a2, sm_iac)))
			return CMD_MUTATES | CMD_IAC;
		return CMD_MUTATES;
	}
	if (!strcmp(cmd, "kubectl")) {
		/* Convention: the verb comes first; anything else counts as a change. */
		if (in_list(a1, kube_ro))
			return 0;
		/* exec: what it runs in the container decides; without "--" it is a change. */
		if (!strcmp(a1, "exec")) {
			for (i = 2; i < n; i++)
				if (!strcmp(w[i], "--"))
					return i + 1 < n ? classify_words(w + i + 1, n - i - 1)
							 : CMD_MUTATES;
			return CMD_MUTATES;
		}
		if (in_list(a1, kube_runtime))
			return CMD_MUTATES;
		if (!strcmp(a1, "delete") && (in_list(a2, pods) || hp_starts_with(a2, "pod/")))
			return CMD_MUTATES;
		return CMD_MUTATES | CMD_IAC;
	}
	if (!strcmp(cmd, "helm"))
		return in_list(a1, helm_mut) ? CMD_MUTATES | CMD_IAC : 0;
	if (!strcmp(cmd, "setpci")) {
		/* setpci writes when a register is given a value (REG=VALUE). */
		for (i = 1; i < n; i++)
			if (strchr(w[i], '='))
				return CMD_MUTATES;
		return 0;
	}
	if (!strcmp(cmd, "iptables") || !strcmp(cmd, "ip6tables"))
		return any_word(w, n, ipt_mut, 0) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "nft"))
		return in_list(a1, nft_mut) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "ip"))
		return any_word(w, n, ip_mut, 0) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "systemctl"))
		return in_list(a1, unit_mut) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "scontrol"))
		return in_list(a1, slurm_mut) ? CMD_MUTATES : 0;
	if (in_list(cmd, plain_mut) || hp_starts_with(cmd, "mkfs."))
		return CMD_MUTATES;
	if (in_list(cmd, pkg_tools))
		return in_list(a1, pkg_mut) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "dpkg"))
		return any_word(w, n, dpkg_mut, 0) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "docker") || !strcmp(cmd, "crictl") || !strcmp(cmd, "ctr"))
		return in_list(a1, ctr_ro) ? 0 : CMD_MUTATES;
	if (!strcmp(cmd, "journalctl"))
		return any_word(w, n, vacuum, 1) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "chronyc"))
		return in_list(a1, clock_mut) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "nvidia-smi"))
		return any_word(w, n, gpu_reset, 0) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "dcgmi"))
		return !strcmp(a1, "diag") ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "find"))
		return any_word(w, n, find_del, 0) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "sed"))
		return any_word(w, n, sed_inplace, 0) ? CMD_MUTATES : 0;
	if (!strcmp(cmd, "sysctl")) {
		for (i = 1; i < n; i++)
			if (strchr(w[i], '=') || in_list(w[i], sysctl_mut))
				return CMD_MUTATES;
		return 0;
	}
	return 0;
}

/*
 * The classification of one logical shell line: words split on blanks
 * outside quotes, commands split on | ; & ( ), a '#' starting a word ends
 * the line.
 */
static int classify(const char *text)
{
	char *buf = xmalloc(strlen(text) + 1), *o = buf;
	char *w[MAX_WORDS];
	const char *p;
	size_t n = 0;
	int quote = 0, inword = 0, r = 0;

	for (p = text;; p++) {
		int c = (unsigned char)*p;

		if (quote && c && c != quote) {
			*o++ = (char)c;
			continue;
		}
		if (quote && c == quote) {
			quote = 0;
			continue;
		}
		if (c == '\'' || c == '"') {
			if (!inword && n < MAX_WORDS)
				w[n] = o;
			inword = 1;
			quote = c;
			continue;
		}
		if (c == '\\' && p[1]) {
			if (!inword && n < MAX_WORDS)
				w[n] = o;
			inword = 1;
			*o++ = *++p;
			continue;
		}
		if (!c || isspace(c) || strchr("|;&()", c) || (c == '#' && !inword)) {
			if (inword) {
				*o++ = '\0';
				inword = 0;
				if (n < MAX_WORDS)
					n++;
			}
			if (!c || c == '#' || strchr("|;&()", c)) {
				r |= classify_words(w, n);
				n = 0;
			}
			if (!c || c == '#')
				break;
			continue;
		}
		if (!inword && n < MAX_WORDS)
			w[n] = o;
		inword = 1;
		*o++ = (char)c;
	}
	free(buf);
	return r;
}

/* The classification of a fenced block; continuation lines are joined. */
static int classify_block(const struct doc *d, const struct block *b)
{
	size_t i, len = 1;
	char *acc;
	int r = 0;

	for (i = b->open + 1; i < b->close; i++)
		len += strlen(d->line[i]) + 1;
	acc = xmalloc(len);
	acc[0] = '\0';
	for (i = b->open + 1; i < b->close; i++) {
		size_t l = strlen(d->line[i]);

		strcat(acc, d->line[i]);
		if (l && d->line[i][l - 1] == '\\') {
			acc[strlen(acc) - 1] = ' ';
			continue;
		}
		r |= classify(acc);
		acc[0] = '\0';
	}
	r |= classify(acc);
	free(acc);
	return r;
}

/* ---- tests ---- */

static void t_classifier(void)
{
	static const struct {
		const char *line;
		int want;
	} cases[] = {
		{ "aws ec2 describe-security-groups --group-ids sg-1", 0 },
		{ "aws ec2 authorize-security-group-egress --group-id sg-1", CMD_MUTATES | CMD_IAC },
		{ "aws eks update-cluster-config --name x", CMD_MUTATES | CMD_IAC },
		{ "aws iam put-role-policy --role-name r", CMD_MUTATES | CMD_IAC },
		{ "aws sagemaker update-cluster --cluster-name c", CMD_MUTATES | CMD_IAC },
		{ "aws sagemaker batch-reboot-cluster-nodes --node-ids x", CMD_MUTATES },
		{ "aws sagemaker list-cluster-nodes --cluster-name c | grep x", 0 },
		{ "aws ssm start-session --target t", 0 },
		{ "aws s3 cp a s3://b/a", CMD_MUTATES },
		{ "aws s3 ls s3://b/", 0 },
		{ "kubectl get pods -n kube-system", 0 },
		{ "kubectl delete pod -n kube-system aws-node-1", CMD_MUTATES },
		{ "kubectl delete namespace x", CMD_MUTATES | CMD_IAC },
		{ "kubectl -n kube-system delete pod x", CMD_MUTATES | CMD_IAC },
		{ "kubectl cordon n1", CMD_MUTATES | CMD_IAC },
		{ "kubectl set env daemonset aws-node X=1", CMD_MUTATES | CMD_IAC },
		{ "sudo systemctl restart slurmctld", CMD_MUTATES },
		{ "systemctl is-active munge", 0 },
		{ "sudo systemctl status slurmd && free -h && df -h", 0 },
		{ "sudo scontrol update nodename=n state=resume", CMD_MUTATES },
		{ "scontrol show node n | grep -E \"State|Reason\"", 0 },
		{ "last reboot | head -5", 0 },
		{ "dmesg | grep -iE \"panic|reboot|rm\" | tail", 0 },
		{ "echo 1024 | sudo tee /proc/sys/vm/nr_hugepages", CMD_MUTATES },
		{ "sudo journalctl --vacuum-size=500M", CMD_MUTATES },
		{ "journalctl -b -1 --no-pager | tail -100 || echo none", 0 },
		{ "sudo chronyc makestep", CMD_MUTATES },
		{ "chronyc tracking", 0 },
		{ "TOKEN=$(curl -s -X PUT http://x) ", 0 },
		{ "X=1 sudo -E rm -rf /tmp/x", CMD_MUTATES },
		{ "sudo find /var/log -name \"*.gz\" -delete", CMD_MUTATES },
		{ "sudo find / -xdev -printf '%h\\n'", 0 },
		{ "docker system prune -a", CMD_MUTATES },
		{ "sudo crictl ps -a", 0 },
		{ "pip cache purge", CMD_MUTATES },
		{ "for d in /var /opt; do echo \"$d $(sudo find \"$d\" -xdev | wc -l)\"; done", 0 },
		{ "sysctl vm.nr_hugepages", 0 },
		{ "sudo sysctl -w vm.nr_hugepages=1024", CMD_MUTATES },
		{ "ls /x # then rm -rf /", 0 },
		{ "sudo dcgmi diag -r medium", CMD_MUTATES },
		{ "dcgmi health --check -j", 0 },
		{ "nvidia-smi -q | grep ECC", 0 },
		{ "helm upgrade --install p eks/p --namespace kube-system", CMD_MUTATES | CMD_IAC },
		{ "helm repo add eks https://aws.github.io/eks-charts", 0 },
		{ "helm list -A", 0 },
		{ "sudo setpci -s 00:01.0 ECAP_ACS+6.w=0000", CMD_MUTATES },
		{ "sudo setpci -s 00:01.0 ECAP_ACS+6.w", 0 },
		{ "sudo iptables -I INPUT -p tcp --dport 29500 -j ACCEPT", CMD_MUTATES },
		{ "sudo iptables -L -n", 0 },
		{ "sudo iptables-save | grep DROP", 0 },
		{ "sudo nft list ruleset", 0 },
		{ "sudo nft flush ruleset", CMD_MUTATES },
		{ "ip -br link", 0 },
		{ "sudo ip link set dev eth0 mtu 9001", CMD_MUTATES },
		{ "kubectl exec -n ns p -c c -- df -h /dev/shm", 0 },
		{ "kubectl exec -n ns p -- python3 -c 'print(1)'", 0 },
		{ "kubectl exec -n ns p -- rm -rf /data", CMD_MUTATES },
		{ "kubectl exec -it p sh", CMD_MUTATES },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++)
		if (classify(cases[i].line) != cases[i].want)
			T_FAILF("classify(\"%s\") is %d, expected %d", cases[i].line,
				classify(cases[i].line), cases[i].want);
}

static void t_documents_embedded(void)
{
	T_ASSERT(refdoc_text(DETAIL) != NULL);
	T_ASSERT(refdoc_text(CATALOG) != NULL);
	T_ASSERT(refdoc_text(NCCL) != NULL);
}

/* The id headings of a document, found by this file's own reading of it. */
struct ids {
	char id[256][16];
	const char *title[256];
	size_t line[256];
	int level[256];
	size_t n;
};

static void doc_ids(const struct doc *d, struct ids *out)
{
	char id[16];
	const char *title;
	size_t i;
	int level;

	out->n = 0;
	for (i = 0; i < d->n; i++) {
		if (!id_heading(d, i, id, sizeof(id), &level, &title))
			continue;
		if (out->n == HP_ARRAY_LEN(out->id))
			T_FAILF("%s: more than %zu sections", d->name, HP_ARRAY_LEN(out->id));
		strcpy(out->id[out->n], id);
		out->title[out->n] = title;
		out->line[out->n] = i + 1;
		out->level[out->n] = level;
		out->n++;
	}
}

static int ids_has(const struct ids *x, const char *id)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		if (!strcmp(x->id[i], id))
			return 1;
	return 0;
}

/* "B.10" sorts after "B.9": (letter, number, sub-letter), absent parts as 0. */
static int id_cmp(const char *a, const char *b)
{
	long na = 0, nb = 0;
	int sa = 0, sb = 0;
	const char *p;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	if (a[1] == '.')
		na = strtol(a + 2, NULL, 10);
	if (b[1] == '.')
		nb = strtol(b + 2, NULL, 10);
	if (na != nb)
		return na < nb ? -1 : 1;
	p = strchr(a + 1, '.');
	sa = p && (p = strchr(p + 1, '.')) ? p[1] : 0;
	p = strchr(b + 1, '.');
	sb = p && (p = strchr(p + 1, '.')) ? p[1] : 0;
	return sa < sb ? -1 : sa > sb;
}

/*
 * The guide's section headings: well-formed ids, one heading each, a
 * title, the level its depth implies ("## A", "### A.1", "#### A.1.a"),
 * in order (A, A.1, A.2, B, …).
 */
static void t_headings_well_formed(void)
{
	struct doc d;
	struct ids x;
	size_t i, j;
	int depth;

	doc_load(&d, DETAIL);
	doc_ids(&d, &x);
	T_ASSERT(x.n >= 15);
	for (i = 0; i < x.n; i++) {
		parse_id(x.id[i], &depth);
		if (!*x.title[i])
			T_FAILF("%s:%zu: section '%s' has no title", DETAIL, x.line[i], x.id[i]);
		if (x.level[i] != 2 + depth)
			T_FAILF("%s:%zu: heading for '%s' has level %d, expected %d", DETAIL,
				x.line[i], x.id[i], x.level[i], 2 + depth);
		for (j = 0; j < i; j++)
			if (!strcmp(x.id[j], x.id[i]))
				T_FAILF("%s:%zu: heading id '%s' appears twice", DETAIL, x.line[i],
					x.id[i]);
		if (i && id_cmp(x.id[i - 1], x.id[i]) >= 0)
			T_FAILF("%s:%zu: heading '%s' comes after '%s'", DETAIL, x.line[i], x.id[i],
				x.id[i - 1]);
	}
	T_ASSERT(id_cmp("B.9", "B.10") < 0 && id_cmp("G.1", "G.1.a") < 0 &&
		 id_cmp("G.1.d", "G.2") < 0 && id_cmp("A.3", "B") < 0 && id_cmp("F", "F") == 0);
	doc_free(&d);
}

/*
 * The titles pointers print come from the guide itself: for every heading
 * this file finds, hp_refdoc_title gives its title, and it knows no other
 * section.
 */
static void t_titles_are_the_guides(void)
{
	const struct hp_refdoc *r = hp_refdoc_get(DETAIL);
	struct doc d;
	struct ids x;
	size_t i;

	T_ASSERT(r != NULL);
	doc_load(&d, DETAIL);
	doc_ids(&d, &x);
	for (i = 0; i < x.n; i++)
		if (!hp_refdoc_title(DETAIL, x.id[i]) ||
		    strcmp(hp_refdoc_title(DETAIL, x.id[i]), x.title[i]))
			T_FAILF("%s:%zu: section '%s' is titled '%s', the lookup says '%s'", DETAIL,
				x.line[i], x.id[i], x.title[i],
				hp_refdoc_title(DETAIL, x.id[i]) ? hp_refdoc_title(DETAIL, x.id[i])
								 : "(none)");
	T_EQ(r->nsec, x.n);
	T_ASSERT(hp_refdoc_title(DETAIL, "Z.9") == NULL);
	doc_free(&d);
}

/* Every "§ ID" of the document names a section of the guide. */
static void check_pointers(const char *name)
{
	struct doc d, guide;
	struct ids known, known_nccl;
	size_t i;
	int depth;

	doc_load(&guide, DETAIL);
	doc_ids(&guide, &known);
	doc_free(&guide);
	doc_load(&guide, NCCL);
	doc_ids(&guide, &known_nccl);
	doc_free(&guide);
	doc_load(&d, name);
	for (i = 0; i < d.n; i++) {
		const char *p = d.line[i];

		while ((p = strstr(p, SECT)) != NULL) {
			char id[16];
			size_t n;

			p += strlen(SECT);
			while (*p == ' ')
				p++;
			if (*p == '<')
				continue;
			n = parse_id(p, &depth);
			if (!n || n >= sizeof(id))
				T_FAILF("%s:%zu: '%s' is not followed by a section id: \"%.40s\"", name,
					i + 1, SECT, p);
			memcpy(id, p, n);
			id[n] = '\0';
			if (!ids_has(&known, id) && !ids_has(&known_nccl, id))
				T_FAILF("%s:%zu: pointer to unknown section '%s'", name, i + 1, id);
		}
	}
	doc_free(&d);
}

static void t_pointers_resolve(void)
{
	check_pointers(DETAIL);
	check_pointers(CATALOG);
	check_pointers(NCCL);
}

/* The section (index of the last id heading) that line i belongs to. */
static long section_of(const struct doc *d, size_t i)
{
	char id[16];
	const char *title;
	int level;

	for (;; i--) {
		if (id_heading(d, i, id, sizeof(id), &level, &title))
			return (long)i;
		if (!i)
			return -1;
	}
}

static void check_blocks(const char *name)
{
	struct doc d;
	struct block *b;
	size_t nb, k, i;

	doc_load(&d, name);
	nb = doc_blocks(&d, &b);
	for (k = 0; k < nb; k++) {
		int cls = classify_block(&d, &b[k]), blast = 0, iac = 0;

		if (!b[k].suggested) {
			if (cls)
				T_FAILF("%s:%zu: a read-only block holds a command that changes state",
					name, b[k].open + 1);
			continue;
		}
		if (!(cls & CMD_MUTATES))
			T_FAILF("%s:%zu: a suggested block holds no command that changes state", name,
				b[k].open + 1);
		for (i = b[k].close + 1; i < d.n; i++) {
			const char *l = d.line[i];

			if (is_fence(l) || is_heading(&d, i) || !strncmp(l, MARKER, strlen(MARKER)))
				break;
			if (hp_starts_with(l, "Blast radius: ") && strlen(l) > 30)
				blast = 1;
			if (hp_starts_with(l, "IaC note: "))
				iac = 1;
		}
		if (!blast)
			T_FAILF("%s:%zu: suggested block without a 'Blast radius:' line", name,
				b[k].open + 1);
		if ((cls & CMD_IAC) && !iac)
			T_FAILF("%s:%zu: configuration change without an 'IaC note:' line", name,
				b[k].open + 1);
	}
	free(b);
	doc_free(&d);
}

static void t_suggested_blocks_annotated(void)
{
	check_blocks(DETAIL);
	check_blocks(CATALOG);
	check_blocks(NCCL);
}

static void iac_notes(const char *name, size_t min)
{
	struct doc d;
	size_t i, notes = 0;

	doc_load(&d, name);
	for (i = 0; i < d.n; i++) {
		if (!hp_starts_with(d.line[i], "IaC note: "))
			continue;
		notes++;
		if (!strstr(d.line[i], "drift") || !strstr(d.line[i], "IaC source") ||
		    !strstr(d.line[i], "Terraform"))
			T_FAILF("%s:%zu: IaC note without the drift warning", name, i + 1);
	}
	if (notes < min)
		T_FAILF("%s: %zu IaC notes, expected at least %zu", name, notes, min);
	doc_free(&d);
}

static void t_iac_notes_warn_of_drift(void)
{
	iac_notes(DETAIL, 10);
	iac_notes(NCCL, 4);
}

/* Within a section, a reboot is suggested before any replacement. */
static void t_reboot_before_replace(void)
{
	struct doc d;
	struct block *b;
	size_t nb, k, i;
	long last_sec = -2;
	int rebooted = 0, replaces = 0;

	doc_load(&d, DETAIL);
	nb = doc_blocks(&d, &b);
	for (k = 0; k < nb; k++) {
		long sec = section_of(&d, b[k].open);
		int has_reboot = 0, has_replace = 0;

		if (sec != last_sec) {
			last_sec = sec;
			rebooted = 0;
		}
		if (!b[k].suggested)
			continue;
		for (i = b[k].open + 1; i < b[k].close; i++) {
			has_reboot |= !!strstr(d.line[i], "batch-reboot-cluster-nodes");
			has_replace |= !!strstr(d.line[i], "batch-replace-cluster-nodes");
		}
		if (has_replace) {
			const char *blast = NULL;

			replaces++;
			if (!rebooted && !has_reboot)
				T_FAILF("%s:%zu: replacement suggested before any reboot in its section",
					DETAIL, b[k].open + 1);
			for (i = b[k].close + 1; i < d.n && !blast; i++)
				if (hp_starts_with(d.line[i], "Blast radius: "))
					blast = d.line[i];
			T_ASSERT(blast != NULL);
			T_CONTAINS(blast, "volumes");
		}
		rebooted |= has_reboot;
	}
	T_ASSERT(replaces > 0);
	free(b);
	doc_free(&d);
}

static void t_placeholders_known(void)
{
	static const char *const known[] = {
		"CLUSTER", "CLUSTER_ID", "REGION", "INSTANCE_ID", "GROUP", "SG_ID", "VPC_ID",
		"SUBNET_ID", "EKS_NAME", "NODE_NAME", "NODE_IP", "INSTANCE_TYPE", "POD",
		"NAMESPACE", "CONTAINER_ID", "ROUTE_TABLE_ID", "NAT_GATEWAY_ID", "ENDPOINT_SG_ID",
		"EKS_CLUSTER_SG", "CIDR", "AZ", "EVENT_ID", "SCRIPT", "LIFECYCLE_S3_URI",
		"ON_CREATE_SCRIPT", "EXECUTION_ROLE_ARN", "INSTANCE_COUNT", "ROLE_NAME",
		"PRINCIPAL_ARN", "COMMAND", "RUN", "CHECKPOINT_S3_URI", "DEVICE", "ADDON_VERSION", "FILE",
		"ID", "JOB", "CONTAINER", "POLICY", "PID", "ACTION", NULL
	};
	static const char *const names[] = { DETAIL, CATALOG, NCCL };
	size_t f, i;

	for (f = 0; f < HP_ARRAY_LEN(names); f++) {
		struct doc d;

		doc_load(&d, names[f]);
		for (i = 0; i < d.n; i++) {
			const char *p = d.line[i];

			while ((p = strchr(p, '<')) != NULL) {
				const char *e = ++p;
				char name[40];

				if (*e < 'A' || *e > 'Z')
					continue;
				while ((*e >= 'A' && *e <= 'Z') || isdigit((unsigned char)*e) || *e == '_')
					e++;
				if (*e != '>' || (size_t)(e - p) >= sizeof(name))
					continue;
				memcpy(name, p, (size_t)(e - p));
				name[e - p] = '\0';
				if (!in_list(name, known))
					T_FAILF("%s:%zu: unknown placeholder <%s>", names[f], i + 1, name);
			}
		}
		doc_free(&d);
	}
}

static void t_policy_stated(void)
{
	const char *t = refdoc_text(DETAIL);

	T_ASSERT(t != NULL);
	T_CONTAINS(t, "## Operating policy");
	T_CONTAINS(t, "hpnode is read-only");
	T_CONTAINS(t, "investigate \xE2\x86\x92 reboot \xE2\x86\x92 replace");
	T_CONTAINS(t, "not supported on Slurm controller");
	T_CONTAINS(t, "CloudFormation, CDK, Terraform, Pulumi");
	/* The policy comes before the first section. */
	T_ASSERT(strstr(t, "## Operating policy") < strstr(t, "## A: "));
}

static void t_catalog_rows_point_somewhere(void)
{
	struct doc d;
	size_t i, rows = 0;

	doc_load(&d, CATALOG);
	for (i = 0; i < d.n; i++) {
		const char *l = d.line[i];

		if (l[0] != '|' || hp_starts_with(l, "|---"))
			continue;
		/* A header row is followed by the separator row. */
		if (i + 1 < d.n && hp_starts_with(d.line[i + 1], "|---"))
			continue;
		rows++;
		if (!strstr(l, SECT))
			T_FAILF("%s:%zu: catalog row without a section pointer", CATALOG, i + 1);
	}
	T_ASSERT(rows >= 50);
	doc_free(&d);
}

/* "NC3" before "NC3.1" before "NC10": by number, then sub-number (absent = 0). */
static int nccl_id_cmp(const char *a, const char *b)
{
	char *end;
	long na = strtol(a + 2, &end, 10), sa = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
	long nb = strtol(b + 2, &end, 10), sb = *end == '.' ? strtol(end + 1, NULL, 10) : 0;

	if (na != nb)
		return na < nb ? -1 : 1;
	return sa < sb ? -1 : sa > sb;
}

/*
 * The NCCL guide's headings on their own terms: every id of the NCCL form,
 * once, titled, at the level its depth implies, in order; and the titles
 * the report prints for them are the headings' own.
 */
static void t_nccl_headings_well_formed(void)
{
	const struct hp_refdoc *r = hp_refdoc_get(NCCL);
	struct doc d;
	struct ids x;
	size_t i, j;
	int depth;

	T_ASSERT(r != NULL);
	doc_load(&d, NCCL);
	doc_ids(&d, &x);
	T_ASSERT(x.n >= 25);
	for (i = 0; i < x.n; i++) {
		if (parse_id(x.id[i], &depth) != strlen(x.id[i]) || strncmp(x.id[i], "NC", 2))
			T_FAILF("%s:%zu: heading id '%s' is not of the form NC<n>[.<m>]", NCCL,
				x.line[i], x.id[i]);
		if (!*x.title[i])
			T_FAILF("%s:%zu: section '%s' has no title", NCCL, x.line[i], x.id[i]);
		if (x.level[i] != 2 + depth)
			T_FAILF("%s:%zu: heading for '%s' has level %d, expected %d", NCCL,
				x.line[i], x.id[i], x.level[i], 2 + depth);
		for (j = 0; j < i; j++)
			if (!strcmp(x.id[j], x.id[i]))
				T_FAILF("%s:%zu: heading id '%s' appears twice", NCCL, x.line[i],
					x.id[i]);
		if (i && nccl_id_cmp(x.id[i - 1], x.id[i]) >= 0)
			T_FAILF("%s:%zu: heading '%s' comes after '%s'", NCCL, x.line[i], x.id[i],
				x.id[i - 1]);
		if (!hp_refdoc_title(NCCL, x.id[i]) || strcmp(hp_refdoc_title(NCCL, x.id[i]),
							      x.title[i]))
			T_FAILF("%s:%zu: section '%s' is titled '%s', the lookup says '%s'", NCCL,
				x.line[i], x.id[i], x.title[i],
				hp_refdoc_title(NCCL, x.id[i]) ? hp_refdoc_title(NCCL, x.id[i])
							       : "(none)");
	}
	T_EQ(r->nsec, x.n);
	T_ASSERT(nccl_id_cmp("NC3", "NC3.1") < 0 && nccl_id_cmp("NC3.9", "NC10") < 0 &&
		 nccl_id_cmp("NC17.2", "NC17.10") < 0 && nccl_id_cmp("NC4", "NC4") == 0);
	T_ASSERT(hp_refdoc_title(NCCL, "NC99") == NULL);
	T_ASSERT(hp_refdoc_title(NCCL, "A") == NULL);
	doc_free(&d);
}

/* Each of ids' entries: no id of the other guide, and hp_refdoc_of_id names want, in any case. */
static void ids_belong_to(const struct ids *x, const struct ids *other, const char *want)
{
	size_t i, j;

	for (i = 0; i < x->n; i++) {
		char low[16];

		if (ids_has(other, x->id[i]))
			T_FAILF("id '%s' is a section of both guides", x->id[i]);
		T_STREQ(hp_refdoc_of_id(x->id[i]), want);
		for (j = 0; x->id[i][j] && j + 1 < sizeof(low); j++)
			low[j] = (char)tolower((unsigned char)x->id[i][j]);
		low[j] = '\0';
		T_STREQ(hp_refdoc_of_id(low), want);
	}
}

/*
 * The two guides' ids can never be taken for each other: no id is a
 * section of both, every node guide heading has the node form and every
 * NCCL heading the NCCL form (hp_refdoc_of_id tells them apart in any
 * case), and forms of neither kind belong to no guide.
 */
static void t_section_ids_never_collide(void)
{
	struct doc d;
	struct ids node, nccl;

	doc_load(&d, DETAIL);
	doc_ids(&d, &node);
	doc_free(&d);
	doc_load(&d, NCCL);
	doc_ids(&d, &nccl);
	doc_free(&d);
	T_ASSERT(node.n >= 15 && nccl.n >= 25);
	ids_belong_to(&node, &nccl, HP_REFDOC_DETAIL);
	ids_belong_to(&nccl, &node, HP_REFDOC_NCCL);
	T_ASSERT(hp_refdoc_of_id("NC") == NULL);
	T_ASSERT(hp_refdoc_of_id("N.C1") == NULL);
	T_ASSERT(hp_refdoc_of_id("NC1.a") == NULL);
	T_ASSERT(hp_refdoc_of_id("munge") == NULL);
	T_ASSERT(hp_refdoc_of_id("") == NULL);
	T_STREQ(hp_refdoc_of_id("N.1"), HP_REFDOC_DETAIL);
}

/*
 * Every embedded Japanese guide ("ja/<name>") is its English guide's
 * translation: the same sections (ids, levels, order) and the same
 * suggested-command blocks, byte for byte; the node guide has one.
 */
static void t_japanese_guides_match(void)
{
	const char *name;
	size_t i, k, pairs = 0;

	for (i = 0; (name = hp_refdoc_embedded_name(i)); i++) {
		const struct hp_refdoc *ja, *en;

		if (strncmp(name, HP_REFDOC_JA, strlen(HP_REFDOC_JA)))
			continue;
		ja = hp_refdoc_get(name);
		en = hp_refdoc_get(name + strlen(HP_REFDOC_JA));
		if (!ja || !en)
			T_FAILF("%s: %s", name, ja ? "no English guide" : "does not parse");
		pairs++;
		T_EQ(ja->nsec, en->nsec);
		for (k = 0; k < en->nsec; k++) {
			T_STREQ(ja->sec[k].id, en->sec[k].id);
			T_EQ(ja->sec[k].level, en->sec[k].level);
		}
		T_EQ(ja->nblk, en->nblk);
		for (k = 0; k < en->nblk; k++) {
			T_STREQ(ja->blk[k].command, en->blk[k].command);
			T_STREQ(ja->sec[ja->blk[k].section].id, en->sec[en->blk[k].section].id);
		}
	}
	T_ASSERT(pairs >= 1);
	T_ASSERT(hp_refdoc_get(HP_REFDOC_JA HP_REFDOC_DETAIL) != NULL);
}

/* The locale rule of `explain`: gettext's order, ja_* is Japanese, anything else English. */
static void t_lang_of_locale(void)
{
	static const struct {
		const char *all, *messages, *lang;
		enum hp_lang want;
	} cases[] = {
		{ NULL, NULL, NULL, HP_LANG_EN },
		{ "", "", "", HP_LANG_EN },
		{ NULL, NULL, "ja_JP.UTF-8", HP_LANG_JA },
		{ NULL, NULL, "ja", HP_LANG_JA },
		{ NULL, NULL, "ja.UTF-8", HP_LANG_JA },
		{ NULL, NULL, "ja_JP@cjknarrow", HP_LANG_JA },
		{ NULL, NULL, "jam_JM", HP_LANG_EN },
		{ NULL, NULL, "j", HP_LANG_EN },
		{ NULL, NULL, "en_US.UTF-8", HP_LANG_EN },
		{ NULL, NULL, "C", HP_LANG_EN },
		{ "C", NULL, "ja_JP.UTF-8", HP_LANG_EN },
		{ "POSIX", "ja_JP.UTF-8", "ja_JP.UTF-8", HP_LANG_EN },
		{ "ja_JP.eucJP", "en_US.UTF-8", "C", HP_LANG_JA },
		{ "", "ja_JP.UTF-8", "C", HP_LANG_JA },
		{ NULL, "C.UTF-8", "ja_JP.UTF-8", HP_LANG_EN },
		{ "", "", "ja_JP.UTF-8", HP_LANG_JA },
	};
	enum hp_lang l = HP_LANG_JA;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++)
		if (hp_lang_of_locale(cases[i].all, cases[i].messages, cases[i].lang) != cases[i].want)
			T_FAILF("case %zu (LC_ALL=%s LC_MESSAGES=%s LANG=%s): wrong language", i,
				cases[i].all ? cases[i].all : "(unset)",
				cases[i].messages ? cases[i].messages : "(unset)",
				cases[i].lang ? cases[i].lang : "(unset)");
	T_EQ(hp_lang_parse("en", &l), 0);
	T_EQ(l, HP_LANG_EN);
	T_EQ(hp_lang_parse("ja", &l), 0);
	T_EQ(l, HP_LANG_JA);
	T_EQ(hp_lang_parse("fr", &l), -1);
	T_EQ(hp_lang_parse("JA", &l), -1);
	T_EQ(hp_lang_parse("ja_JP", &l), -1);
	T_EQ(hp_lang_parse("", &l), -1);
	T_EQ(hp_lang_parse(NULL, &l), -1);
	T_EQ(l, HP_LANG_JA);
}

T_MAIN(T(t_classifier), T(t_documents_embedded), T(t_headings_well_formed),
       T(t_titles_are_the_guides), T(t_nccl_headings_well_formed),
       T(t_pointers_resolve), T(t_suggested_blocks_annotated), T(t_iac_notes_warn_of_drift),
       T(t_reboot_before_replace), T(t_placeholders_known), T(t_policy_stated),
       T(t_catalog_rows_point_somewhere), T(t_section_ids_never_collide),
       T(t_japanese_guides_match), T(t_lang_of_locale))
