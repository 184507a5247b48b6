/*
 * `hpnode bundle`'s collection (include/hp/bundle.h). The node script only
 * reads: files (their last bytes, `tail -c`), the journal of the window
 * (`journalctl --no-pager`), and the output of read-only tools, each under
 * timeout(1) where the node has it and cut to the file cap on the node.
 * Each file is framed by a marker with a random part fixed per run, so no
 * line of a log can end a file early. The NCCL probe runs inside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "hp/bundle.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/probe.h"

/* The functions the items use; FILE_CAP, FROM, UNTIL and the marker are set before them. */
static const char prelude[] =
	"hp_have() { command -v \"$1\" >/dev/null 2>&1; }\n"
	"hp_lim() { if [ -n \"$HP_T\" ]; then timeout -k 5 120 \"$@\"; else \"$@\"; fi; }\n"
	/* hp_f NAME PATH: the last bytes of a regular file. */
	"hp_f() {\n"
	"\tif [ ! -f \"$R$2\" ] || [ ! -r \"$R$2\" ]; then echo \"$M ABSENT $1 $2\"; return; fi\n"
	"\techo \"$M BEGIN $1 $2\"\n"
	"\thp_lim tail -c \"$C\" \"$R$2\" 2>/dev/null\n"
	"\thp_rc=$?\n"
	"\techo\n"
	"\techo \"$M END $1 $hp_rc\"\n"
	"}\n"
	/* hp_x NAME CMD ARGS...: the last bytes of what CMD prints (stderr joined). */
	"hp_x() {\n"
	"\thp_n=$1\n"
	"\tshift\n"
	"\techo \"$M BEGIN $hp_n $*\"\n"
	"\thp_rc=$( { { \"$@\" </dev/null 2>&1 3>&- 4>&-; echo \"$?\" >&3; } | tail -c \"$C\" >&4; } 3>&1 )\n"
	"\techo\n"
	"\techo \"$M END $hp_n ${hp_rc:-255}\"\n"
	"}\n"
	/* hp_c NAME CMD ARGS...: hp_x under the time limit, for an installed command. */
	"hp_c() {\n"
	"\tif ! hp_have \"$2\"; then echo \"$M ABSENT $1 $2\"; return; fi\n"
	"\thp_cn=$1\n"
	"\tshift\n"
	"\thp_x \"$hp_cn\" hp_lim \"$@\"\n"
	"}\n"
	/* hp_j NAME ARGS...: the journal of the window. */
	"hp_j() {\n"
	"\thp_jn=$1\n"
	"\tshift\n"
	"\thp_c \"journal/$hp_jn.log\" journalctl --no-pager -q -o short-iso --since \"@$S\" --until \"@$U\" \"$@\"\n"
	"}\n"
	/* hp_d PREFIX DIR: every regular file of DIR (64 at most), never a key. */
	"hp_d() {\n"
	"\tif [ ! -d \"$R$2\" ]; then echo \"$M ABSENT $1/ $2\"; return; fi\n"
	"\thp_k=0\n"
	"\tfor hp_p in \"$R$2\"/*; do\n"
	"\t\t[ -f \"$hp_p\" ] || continue\n"
	"\t\thp_b=${hp_p##*/}\n"
	"\t\tcase $hp_b in\n"
	"\t\tmunge.key|*.key|*.pem|*[!A-Za-z0-9._-]*) continue ;;\n"
	"\t\tesac\n"
	"\t\thp_k=$((hp_k + 1))\n"
	"\t\t[ \"$hp_k\" -le 64 ] || break\n"
	"\t\thp_f \"$1/$hp_b\" \"$2/$hp_b\"\n"
	"\tdone\n"
	"}\n"
	"hp_sysctl() {\n"
	"\tfor hp_s in net/core/rmem_max net/core/wmem_max net/core/netdev_max_backlog \\\n"
	"\t\tnet/ipv4/tcp_rmem net/ipv4/tcp_wmem net/ipv4/tcp_mtu_probing kernel/numa_balancing \\\n"
	"\t\tkernel/shmmax kernel/shmall kernel/yama/ptrace_scope vm/nr_hugepages \\\n"
	"\t\tvm/overcommit_memory vm/max_map_count fs/file-max kernel/pid_max; do\n"
	"\t\tif [ -r \"$R/proc/sys/$hp_s\" ]; then\n"
	"\t\t\techo \"$hp_s = $(head -c 256 \"$R/proc/sys/$hp_s\")\"\n"
	"\t\telse\n"
	"\t\t\techo \"$hp_s unreadable\"\n"
	"\t\tfi\n"
	"\tdone\n"
	"\techo '--- ulimit -a'\n"
	"\tulimit -a\n"
	"}\n"
	"hp_ib_ports() {\n"
	"\tfor hp_p in \"$R\"/sys/class/infiniband/*/ports/*/state; do\n"
	"\t\t[ -f \"$hp_p\" ] && echo \"${hp_p#$R/sys/class/infiniband/}: $(head -c 256 \"$hp_p\")\"\n"
	"\tdone\n"
	"\treturn 0\n"
	"}\n"
	"hp_jobs() {\n"
	"\thp_k=0\n"
	"\tfor hp_p in \"$R\"/var/spool/slurmd/job*/slurm_script; do\n"
	"\t\t[ -f \"$hp_p\" ] || continue\n"
	"\t\thp_b=${hp_p%/slurm_script}\n"
	"\t\thp_b=${hp_b##*/}\n"
	"\t\tcase $hp_b in *[!A-Za-z0-9._-]*) continue ;; esac\n"
	"\t\thp_k=$((hp_k + 1))\n"
	"\t\t[ \"$hp_k\" -le 64 ] || break\n"
	"\t\thp_f \"slurm/job-scripts/$hp_b.sh\" \"${hp_p#$R}\"\n"
	"\tdone\n"
	"}\n";

/* The files every node is asked for: name in the node's folder, then the script line. */
struct item {
	const char *name, *line, *source;
};

static const struct item items[] = {
	{ "journal/all.log", "hp_j all", "journalctl (the window)" },
	{ "journal/kernel.log", "hp_j kernel -k", "journalctl -k" },
	{ "journal/kubelet.log", "hp_j kubelet -u kubelet", "journalctl -u kubelet" },
	{ "journal/containerd.log", "hp_j containerd -u containerd", "journalctl -u containerd" },
	{ "journal/slurmd.log", "hp_j slurmd -u slurmd", "journalctl -u slurmd" },
	{ "journal/slurmctld.log", "hp_j slurmctld -u slurmctld", "journalctl -u slurmctld" },
	{ "journal/amazon-ssm-agent.log",
	  "hp_j amazon-ssm-agent -u amazon-ssm-agent -u snap.amazon-ssm-agent.amazon-ssm-agent",
	  "journalctl -u amazon-ssm-agent" },
	{ "journal/health-agent.log", "hp_j health-agent -u 'sagemaker*' -u 'hyperpod*'",
	  "journalctl -u 'sagemaker*' -u 'hyperpod*'" },
	{ "journal/fabricmanager.log", "hp_j fabricmanager -u nvidia-fabricmanager",
	  "journalctl -u nvidia-fabricmanager" },
	{ "kernel/dmesg.txt", "hp_c kernel/dmesg.txt dmesg --time-format iso", "dmesg --time-format iso" },
	{ "lifecycle/cloud-init-output.log",
	  "hp_f lifecycle/cloud-init-output.log /var/log/cloud-init-output.log",
	  "/var/log/cloud-init-output.log" },
	{ "lifecycle/cloud-init.log", "hp_f lifecycle/cloud-init.log /var/log/cloud-init.log",
	  "/var/log/cloud-init.log" },
	{ "gpu/nvidia-smi-q.txt", "hp_c gpu/nvidia-smi-q.txt nvidia-smi -q", "nvidia-smi -q" },
	{ "gpu/nvidia-smi-topo.txt", "hp_c gpu/nvidia-smi-topo.txt nvidia-smi topo -m",
	  "nvidia-smi topo -m" },
	{ "gpu/dcgmi-health.txt", "hp_c gpu/dcgmi-health.txt dcgmi health --check",
	  "dcgmi health --check" },
	{ "efa/fi_info.txt", "hp_c efa/fi_info.txt fi_info -p efa", "fi_info -p efa" },
	{ "efa/devices.txt", "hp_c efa/devices.txt ls -l \"$R/dev/infiniband\"", "ls -l /dev/infiniband" },
	{ "efa/ports.txt", "hp_x efa/ports.txt hp_ib_ports", "/sys/class/infiniband/*/ports/*/state" },
	{ "nvme/nvme-list.txt", "hp_c nvme/nvme-list.txt nvme list", "nvme list" },
	{ "nvme/lsblk.txt", "hp_c nvme/lsblk.txt lsblk -o NAME,SIZE,TYPE,MOUNTPOINT,MODEL", "lsblk" },
	{ "system/mountinfo", "hp_f system/mountinfo /proc/self/mountinfo", "/proc/self/mountinfo" },
	{ "system/df.txt", "hp_c system/df.txt df -P -k", "df -P -k" },
	{ "system/df-inodes.txt", "hp_c system/df-inodes.txt df -P -i", "df -P -i" },
	{ "system/meminfo", "hp_f system/meminfo /proc/meminfo", "/proc/meminfo" },
	{ "system/top.txt",
	  "hp_c system/top.txt ps -eo pid,ppid,user,pcpu,pmem,rss,etime,args --sort=-pcpu",
	  "ps -eo pid,ppid,user,pcpu,pmem,rss,etime,args --sort=-pcpu" },
	{ "system/failed-units.txt", "hp_c system/failed-units.txt systemctl list-units --failed --no-pager",
	  "systemctl list-units --failed --no-pager" },
	{ "system/os-release", "hp_f system/os-release /etc/os-release", "/etc/os-release" },
	{ "system/uptime", "hp_f system/uptime /proc/uptime", "/proc/uptime" },
	{ "system/sysctl.txt", "hp_x system/sysctl.txt hp_sysctl", "/proc/sys (NCCL-relevant keys), ulimit -a" },
	{ "limits/limits.conf", "hp_f limits/limits.conf /etc/security/limits.conf",
	  "/etc/security/limits.conf" },
	{ "nccl/nccl-probe.txt", "hp_x nccl/nccl-probe.txt hp_nccl", "the NCCL probe (read-only)" },
};

/* Directories whose files are taken whole (names chosen on the node). */
static const char *const dirs[] = {
	"hp_d provision /var/log/provision",
	"hp_d limits/limits.d /etc/security/limits.d",
	"hp_d slurm/etc /opt/slurm/etc",
	"hp_d slurm/etc-slurm /etc/slurm",
};

size_t hp_bundle_planned(const char *const **names, const char *const **sources)
{
	static const char *n[HP_ARRAY_LEN(items)], *s[HP_ARRAY_LEN(items)];
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(items); i++) {
		n[i] = items[i].name;
		s[i] = items[i].source;
	}
	*names = n;
	*sources = s;
	return HP_ARRAY_LEN(items);
}

static void b64(const char *text, struct hp_buf *out)
{
	size_t len = strlen(text);
	unsigned char *b = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock(b, (const unsigned char *)text, (int)len);
	hp_buf_puts(out, (const char *)b);
	free(b);
}

void hp_bundle_command(const struct hp_bundle_opts *o, struct hp_buf *out)
{
	struct hp_buf sc = HP_BUF_INIT((size_t)1 << 20);
	size_t i;

	hp_buf_puts(&sc, "#!/bin/sh\n# hpnode bundle: reads files and read-only tool output, nothing else.\n");
	hp_buf_puts(&sc, prelude);
	hp_buf_puts(&sc, "hp_nccl() {\n\tprintf %s ");
	b64(hp_nccl_probe_script(), &sc);
	hp_buf_puts(&sc, " | base64 -d | sh\n}\n");
	hp_buf_puts(&sc, "hp_bundle() {\n"
			 "\tR=${HPNODE_PROBE_ROOT:-}\n"
			 "\tLC_ALL=C\n\texport LC_ALL\n"
			 "\tPATH=$PATH:$R/usr/sbin:$R/sbin:$R/usr/bin:$R/bin:$R/usr/local/bin:"
			 "$R/opt/amazon/efa/bin:$R/opt/slurm/bin\n\texport PATH\n"
			 "\tif command -v timeout >/dev/null 2>&1; then HP_T=1; else HP_T=; fi\n"
			 "\texec 4>&1\n");
	hp_buf_printf(&sc, "\tM='@@HPB-%s@@'\n\tC=%zu\n\tS=%lld\n\tU=%lld\n", o->nonce, o->file_cap + 1,
		      (long long)o->from_s, (long long)o->until_s);
	for (i = 0; i < HP_ARRAY_LEN(items); i++)
		hp_buf_printf(&sc, "\t%s\n", items[i].line);
	for (i = 0; i < HP_ARRAY_LEN(dirs); i++)
		hp_buf_printf(&sc, "\t%s\n", dirs[i]);
	if (o->job_scripts)
		hp_buf_puts(&sc, "\thp_jobs\n");
	hp_buf_puts(&sc, "\techo \"$M DONE\"\n}\nhp_bundle </dev/null\n");
	hp_probe_command_of(sc.buf, out);
	hp_buf_release(&sc);
}

/*
 * A name the node sent, made safe for the archive: [A-Za-z0-9._/-] (others
 * become '_'), no empty segment, no segment starting with '.', at most 120
 * bytes.
 */
static void safe_name(const char *p, size_t n, char *out, size_t outn)
{
	size_t i, k = 0, seg = 0;

	for (i = 0; i < n && k + 1 < outn && k < 120; i++) {
		char c = p[i];
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == '-' || c == '/';

		if (c == '/' && (k == 0 || out[k - 1] == '/'))
			continue;
		if (c == '.' && (k == 0 || out[k - 1] == '/'))
			c = '_';
		/* No segment longer than 80 bytes, so ustar can always split the path. */
		seg = c == '/' ? 0 : seg + 1;
		if (seg > 80)
			continue;
		out[k++] = ok ? c : '_';
	}
	while (k && out[k - 1] == '/')
		k--;
	out[k] = '\0';
	if (!k)
		snprintf(out, outn, "unnamed");
}

/* The word after the marker's keyword and the rest of the line. */
static void words(const char *p, size_t n, char *name, size_t nn, char *rest, size_t rn)
{
	size_t a = 0;

	while (a < n && p[a] != ' ')
		a++;
	safe_name(p, a, name, nn);
	if (a < n)
		a++;
	snprintf(rest, rn, "%.*s", (int)(n - a), p + a);
}

size_t hp_bundle_parse(const struct hp_bundle_opts *o, const char *text, size_t len,
		       void (*fn)(void *ud, const struct hp_bundle_file *f), void *ud,
		       int *complete)
{
	char marker[64], endm[72];
	size_t ml, el, i = 0, count = 0;

	snprintf(marker, sizeof(marker), "@@HPB-%s@@ ", o->nonce);
	snprintf(endm, sizeof(endm), "\n@@HPB-%s@@ END ", o->nonce);
	ml = strlen(marker);
	el = strlen(endm);
	*complete = 0;
	while (i < len) {
		const char *line = text + i, *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i;
		struct hp_bundle_file f;
		char name[160], rest[512];

		i += ll + (nl != NULL);
		if (ll < ml || memcmp(line, marker, ml))
			continue;
		line += ml;
		ll -= ml;
		memset(&f, 0, sizeof(f));
		f.exit_code = -1;
		f.name = name;
		f.source = rest;
		if (ll == 4 && !memcmp(line, "DONE", 4)) {
			*complete = 1;
			continue;
		}
		if (ll > 7 && !memcmp(line, "ABSENT ", 7)) {
			words(line + 7, ll - 7, name, sizeof(name), rest, sizeof(rest));
			f.state = HP_BF_ABSENT;
			fn(ud, &f);
			count++;
			continue;
		}
		if (ll > 6 && !memcmp(line, "BEGIN ", 6)) {
			const char *cs = text + i, *end = NULL;
			size_t k;

			words(line + 6, ll - 6, name, sizeof(name), rest, sizeof(rest));
			/* The content ends at "\n<marker> END " (the script printed that newline). */
			end = i < len ? memmem(text + i, len - i, endm, el) : NULL;
			f.state = end ? HP_BF_OK : HP_BF_PARTIAL;
			if (!end)
				end = text + len;
			f.size = (size_t)(end - cs);
			f.data = cs;
			f.len = f.size;
			if (f.len > o->file_cap) {
				f.cut = 1;
				f.data = cs + (f.len - o->file_cap);
				f.len = o->file_cap;
			}
			if (end < text + len) {
				const char *el_end;
				size_t after = (size_t)(end - text) + el;

				el_end = memchr(text + after, '\n', len - after);
				k = el_end ? (size_t)(el_end - text) : len;
				/* "<name> <exit status>" */
				{
					const char *sp = memchr(text + after, ' ', k - after), *q;
					int v = 0, digits = 0;

					for (q = sp ? sp + 1 : text + k; q < text + k && *q >= '0' && *q <= '9' &&
					     digits < 4; q++, digits++)
						v = v * 10 + (*q - '0');
					if (digits)
						f.exit_code = v;
				}
				i = k + (el_end != NULL);
			} else {
				i = len;
			}
			fn(ud, &f);
			count++;
		}
	}
	return count;
}

/* ---- CloudWatch streams of the window ---- */

void hp_bundle_utc(int64_t ms, char out[32])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 32, "?");
}

static void cw_prefix(struct hp_aws *a, struct hp_snapshot *s, const char *group, const char *prefix,
		      int64_t from_s, int64_t until_s, int pages, struct hp_buf *out, char *note,
		      size_t nn)
{
	char *token = NULL;
	int page;

	note[0] = '\0';
	for (page = 0; page < pages; page++) {
		cJSON *in = cJSON_CreateObject(), *ev;
		struct hp_aws_result r;
		const char *next;

		cJSON_AddStringToObject(in, "logGroupName", group);
		cJSON_AddStringToObject(in, "logStreamNamePrefix", prefix);
		cJSON_AddNumberToObject(in, "startTime", (double)from_s * 1000);
		cJSON_AddNumberToObject(in, "endTime", (double)until_s * 1000);
		if (token)
			cJSON_AddStringToObject(in, "nextToken", token);
		memset(&r, 0, sizeof(r));
		if (hp_aws_json(a, HP_SVC_LOGS, "FilterLogEvents", in, &r)) {
			hp_collect_record(s, HP_SVC_LOGS, "FilterLogEvents", &r);
			snprintf(note, nn, "FilterLogEvents failed (%s %.80s) after %d page(s)",
				 hp_aws_class_name(r.cls), r.code, page);
			cJSON_Delete(in);
			hp_aws_result_release(&r);
			break;
		}
		cJSON_Delete(in);
		cJSON_ArrayForEach(ev, hp_json_arr(r.json, "events")) {
			const char *stream = hp_json_str(ev, "logStreamName"), *msg = hp_json_str(ev, "message");
			double ts = hp_json_num(ev, "timestamp", 0);
			char when[32];

			hp_bundle_utc((int64_t)ts, when);
			if (hp_buf_addf(out, "%s %s %s\n", when, stream ? stream : "?", msg ? msg : "")) {
				snprintf(note, nn, "cut at the file cap");
				break;
			}
		}
		next = hp_json_str(r.json, "nextToken");
		free(token);
		token = next && *next && !note[0] ? xstrdup(next) : NULL;
		hp_aws_result_release(&r);
		if (!token)
			break;
	}
	if (token && !note[0])
		snprintf(note, nn, "more events than %d pages", pages);
	free(token);
}

void hp_bundle_cloudwatch(struct hp_aws *a, struct hp_snapshot *s, int64_t from_s, int64_t until_s,
			  int pages, size_t cap,
			  void (*fn)(void *ud, const char *name, const char *text, size_t len,
				     const char *note),
			  void *ud)
{
	static const char *const prefixes[][2] = {
		{ "cloudwatch/lifecycle.log", "LifecycleConfig/" },
		{ "cloudwatch/health-agent.log", "SagemakerHealthMonitoringAgent/" },
	};
	const char *name = hp_snap_cluster_name(s);
	char id[64], group[512], note[256];
	size_t i;

	hp_snap_cluster_id(s, id);
	if (!*name || !id[0]) {
		fn(ud, prefixes[0][0], NULL, 0, "cluster name or id unknown (DescribeCluster failed)");
		return;
	}
	snprintf(group, sizeof(group), "/aws/sagemaker/Clusters/%s/%s", name, id);
	for (i = 0; i < HP_ARRAY_LEN(prefixes); i++) {
		struct hp_buf out = HP_BUF_INIT(cap);

		cw_prefix(a, s, group, prefixes[i][1], from_s, until_s, pages, &out, note, sizeof(note));
		fn(ud, prefixes[i][0], out.buf, out.len, note[0] ? note : NULL);
		hp_buf_release(&out);
	}
}
