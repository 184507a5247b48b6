/*
 * The on-node NCCL probe's decoders (src/core/facts/nccl-*.c) on real and
 * published tool outputs (tests/data/nccl/, its README says which is which):
 * each block gives its facts, a tool that is missing or failed gives
 * "unknown" (absent keys, never a healthy value), and the framing copes
 * with cut, garbled and hostile output. Also: the embedded script and the
 * remote command that carries it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "hp/probe.h"
#include "hp/util.h"
#include "t.h"

static char *slurp(const char *name)
{
	return t_data("nccl", name, NULL);
}

/* One framed block, as the probe prints it, appended to b. */
static void block(struct hp_buf *b, const char *name, int rc, const char *text)
{
	hp_buf_printf(b, "@@HP@@ BEGIN %s\n%s", name, text);
	if (*text && text[strlen(text) - 1] != '\n')
		hp_buf_putc(b, '\n');
	if (rc >= 0)
		hp_buf_printf(b, "@@HP@@ END %s %d\n", name, rc);
}

static void block_file(struct hp_buf *b, const char *name, int rc, const char *file)
{
	char *t = slurp(file);

	block(b, name, rc, t);
	free(t);
}

static cJSON *parse(struct hp_buf *b, int done)
{
	cJSON *f;

	if (done)
		hp_buf_puts(b, "@@HP@@ DONE\n");
	f = hp_nccl_probe_parse(b->buf, b->len);
	hp_buf_release(b);
	T_ASSERT(f != NULL);
	return f;
}

/* A one-block probe output. */
static cJSON *one(const char *name, int rc, const char *text)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);

	block(&b, name, rc, text);
	return parse(&b, 1);
}

static cJSON *one_file(const char *name, int rc, const char *file)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);

	block_file(&b, name, rc, file);
	return parse(&b, 1);
}

#define NUM(f, path) hp_json_num((f), (path), -12345)
#define HAS(f, path) (hp_json_get((f), (path)) != NULL)

static const char *str_at(const cJSON *arr, int i)
{
	const cJSON *x = cJSON_GetArrayItem(arr, i);

	return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* ---- a whole capture ---- */

static void t_dev_machine_capture(void)
{
	char *t = slurp("probe-dev-machine.txt");
	cJSON *f = hp_nccl_probe_parse(t, strlen(t));
	const cJSON *x;

	free(t);
	T_ASSERT(!hp_json_bool(f, "probe.truncated", 1));
	T_ASSERT(hp_json_bool(f, "probe.root", 0));
	T_EQ(NUM(f, "probe.epoch"), 1796112000);
	T_EQ(NUM(f, "probe.blocks.topo.rc"), 127);
	/* Tools that are not there: unknown, and said so. */
	T_ASSERT(!hp_json_bool(f, "topo.present", 1));
	T_ASSERT(!HAS(f, "topo.gpus"));
	T_ASSERT(!hp_json_bool(f, "acs.present", 1));
	T_ASSERT(!HAS(f, "acs.readable"));
	T_ASSERT(!hp_json_bool(f, "libfabric.present", 1));
	T_ASSERT(!HAS(f, "libfabric.version"));
	T_ASSERT(!HAS(f, "fi_tcp.providers"));
	/* /proc/modules is missing on this machine: not "nvidia_peermem not loaded". */
	T_ASSERT(!hp_json_bool(f, "peermem.read", 1));
	T_ASSERT(!HAS(f, "peermem.loaded"));
	/* Files that are not there: known absences. */
	T_ASSERT(!hp_json_bool(f, "efa_installer.found", 1));
	T_ASSERT(!hp_json_bool(f, "ofi_plugin.found", 1));
	T_STREQ(hp_json_str(f, "nccl_lib.version"), "2.28.9");
	T_STREQ(hp_json_str(f, "nccl_lib.cuda"), "13.0");
	T_EQ(hp_json_len(f, "nccl_lib.libs"), 4);
	T_EQ(hp_json_len(f, "nccl_lib.links"), 4);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(f, "nccl_lib.links"), 0), "target"),
		"libnccl.so.2");
	T_STREQ(hp_json_str(f, "nccl_header.version"), "2.28.9");
	T_STREQ(hp_json_str(f, "nccl_header.file"), "/usr/local/cuda-13.0/include/nccl.h");
	x = cJSON_GetArrayItem(hp_json_arr(f, "netif.interfaces"), 0);
	T_STREQ(hp_json_str(x, "name"), "eth0");
	T_EQ(hp_json_num(x, "mtu", 0), 1400);
	T_STREQ(hp_json_str(x, "state"), "up");
	T_ASSERT(!hp_json_bool(x, "virtual", 1));
	T_ASSERT(hp_json_bool(cJSON_GetArrayItem(hp_json_arr(f, "netif.interfaces"), 1), "virtual", 0));
	T_EQ(NUM(f, "limits.memlock_soft"), 8388608);
	T_STREQ(hp_json_str(f, "limits.stack_hard"), "unlimited");
	T_EQ(NUM(f, "limits.nofile_soft"), 20000);
	T_EQ(NUM(f, "procs.count"), 0);
	T_EQ(NUM(f, "procs.training"), 0);
	T_EQ(NUM(f, "hugepages.sizes.2048.total"), 0);
	T_EQ(NUM(f, "hugepages.sizes.1048576.free"), 0);
	T_ASSERT(hp_json_bool(f, "logind.remove_ipc", 0));
	T_STREQ(hp_json_str(f, "logind.source"), "default");
	T_EQ(NUM(f, "logind.files"), 1);
	T_EQ(NUM(f, "shm.nccl_segments"), 0);
	T_ASSERT(hp_json_bool(f, "shm.read", 0));
	T_EQ(NUM(f, "numa.nodes"), 1);
	T_ASSERT(!hp_json_bool(f, "firewall.present", 1));
	T_ASSERT(!HAS(f, "firewall.readable"));
	/* grep found no NCCL line in /etc/environment: known to be empty. */
	T_ASSERT(cJSON_IsObject(hp_json_get(f, "environment")));
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "environment")), 0);
	cJSON_Delete(f);
}

/* ---- topology ---- */

static void t_topo_h100_with_nics(void)
{
	cJSON *f = one_file("topo", 0, "topo-h100-nics.txt");

	T_EQ(NUM(f, "topo.gpus"), 8);
	T_EQ(NUM(f, "topo.nics"), 10);
	T_EQ(NUM(f, "topo.gpu_pairs"), 28);
	T_EQ(NUM(f, "topo.nvlink_pairs"), 28);
	T_EQ(NUM(f, "topo.pcie_pairs"), 0);
	T_EQ(NUM(f, "topo.links.NV18"), 28);
	T_EQ(NUM(f, "topo.nvlink_min"), 18);
	T_EQ(NUM(f, "topo.gpu_numa.GPU0"), 0);
	T_EQ(NUM(f, "topo.gpu_numa.GPU7"), 1);
	T_STREQ(hp_json_str(f, "topo.nic_path.GPU0"), "PIX");
	T_STREQ(hp_json_str(f, "topo.nic_path.GPU3"), "PIX");
	T_EQ(hp_json_len(f, "topo.pcie"), 0);
	cJSON_Delete(f);
}

static void t_topo_h100_lost_nvlink(void)
{
	cJSON *f = one_file("topo", 0, "topo-h100-lost-nvlink.txt");

	T_EQ(NUM(f, "topo.gpus"), 8);
	T_EQ(NUM(f, "topo.nics"), 0);
	T_EQ(NUM(f, "topo.nvlink_pairs"), 27);
	T_EQ(NUM(f, "topo.pcie_pairs"), 1);
	T_STREQ(str_at(hp_json_arr(f, "topo.pcie"), 0), "GPU3-GPU5 SYS");
	T_EQ(NUM(f, "topo.links.SYS"), 1);
	T_ASSERT(!HAS(f, "topo.nic_path.GPU0"));
	cJSON_Delete(f);

	f = one_file("topo", 0, "topo-h100.txt");
	T_EQ(NUM(f, "topo.nvlink_pairs"), 28);
	T_EQ(NUM(f, "topo.pcie_pairs"), 0);
	T_EQ(NUM(f, "topo.gpu_numa.GPU5"), 1);
	cJSON_Delete(f);
}

static void t_topo_pcie_only(void)
{
	cJSON *f = one_file("topo", 0, "topo-pcie-4090.txt");

	T_EQ(NUM(f, "topo.gpus"), 8);
	T_EQ(NUM(f, "topo.nics"), 2);
	T_EQ(NUM(f, "topo.nvlink_pairs"), 0);
	T_EQ(NUM(f, "topo.pcie_pairs"), 28);
	T_EQ(NUM(f, "topo.links.SYS"), 28);
	T_EQ(hp_json_len(f, "topo.pcie"), 16);
	T_STREQ(hp_json_str(f, "topo.nic_path.GPU6"), "PHB");
	T_STREQ(hp_json_str(f, "topo.nic_path.GPU0"), "SYS");
	T_ASSERT(!HAS(f, "topo.nvlink_min"));
	cJSON_Delete(f);
}

static void t_topo_failures(void)
{
	char *t = slurp("../probe/nvidia-smi-nodriver.txt");
	cJSON *f = one("topo", 9, t);

	free(t);
	T_CONTAINS(hp_json_str(f, "topo.error"), "couldn't communicate with the NVIDIA driver");
	T_ASSERT(!HAS(f, "topo.gpus"));
	T_ASSERT(hp_json_bool(f, "topo.present", 0));
	cJSON_Delete(f);
	f = one("topo", 0, "nothing like a matrix\n");
	T_STREQ(hp_json_str(f, "topo.error"), "nothing like a matrix");
	T_ASSERT(!HAS(f, "topo.nvlink_pairs"));
	cJSON_Delete(f);
	/* Cut before its END: rc unknown, nothing judged. */
	f = one("topo", -1, "        GPU0    GPU1\nGPU0     X      NV12\n");
	T_ASSERT(cJSON_IsNull(hp_json_get(f, "topo.rc")));
	T_ASSERT(!HAS(f, "topo.gpus"));
	cJSON_Delete(f);
}

/* ---- PCIe, IOMMU, GPUDirect ---- */

static void t_acs(void)
{
	cJSON *f = one_file("acs", 0, "lspci-acs.txt");

	T_EQ(NUM(f, "acs.bridges"), 2);
	T_EQ(NUM(f, "acs.enabled"), 1);
	T_ASSERT(hp_json_bool(f, "acs.readable", 0));
	T_STREQ(str_at(hp_json_arr(f, "acs.enabled_bridges"), 0), "0000:02:08.0");
	cJSON_Delete(f);
	f = one_file("acs", 0, "lspci-notroot.txt");
	T_ASSERT(!hp_json_bool(f, "acs.readable", 1));
	T_ASSERT(!HAS(f, "acs.enabled"));
	T_EQ(NUM(f, "acs.bridges"), 2);
	cJSON_Delete(f);
	/* No bridge visible at all (a VM): nothing enabled, which is known. */
	f = one("acs", 0, "");
	T_EQ(NUM(f, "acs.bridges"), 0);
	T_EQ(NUM(f, "acs.enabled"), 0);
	cJSON_Delete(f);
}

static void t_iommu_and_peermem(void)
{
	cJSON *f = one("iommu", 0, "unit dmar0\nunit dmar1\ncmdline intel_iommu=on\ncmdline iommu=pt\n");

	T_EQ(NUM(f, "iommu.units"), 2);
	T_ASSERT(hp_json_bool(f, "iommu.passthrough", 0));
	T_STREQ(str_at(hp_json_arr(f, "iommu.cmdline"), 0), "intel_iommu=on");
	cJSON_Delete(f);
	f = one("iommu", 0, "units none\n");
	T_EQ(NUM(f, "iommu.units"), 0);
	T_ASSERT(!hp_json_bool(f, "iommu.passthrough", 1));
	cJSON_Delete(f);

	f = one("peermem", 0, "nvidia_peermem 16384 0 - Live 0xffffffffc0a2c000 (POE)\n");
	T_ASSERT(hp_json_bool(f, "peermem.loaded", 0));
	T_STREQ(hp_json_str(f, "peermem.module"), "nvidia_peermem");
	cJSON_Delete(f);
	f = one("peermem", 1, "");
	T_ASSERT(hp_json_bool(f, "peermem.read", 0));
	T_ASSERT(!hp_json_bool(f, "peermem.loaded", 1));
	cJSON_Delete(f);
	f = one("peermem", 2, "grep: /proc/modules: Permission denied\n");
	T_ASSERT(!hp_json_bool(f, "peermem.read", 1));
	T_ASSERT(!HAS(f, "peermem.loaded"));
	cJSON_Delete(f);
}

static void t_pci_numa_and_numa(void)
{
	cJSON *f = one("pci_numa", 0,
		       "0000:53:00.0 0x10de 0x030200 0\n0000:64:00.0 0x10de 0x030200 -1\n"
		       "0000:a5:00.0 0x1d0f 0x020000 ?\nbroken line\n");
	const cJSON *d = hp_json_arr(f, "pci_numa.devices");

	T_EQ(cJSON_GetArraySize(d), 3);
	T_EQ(hp_json_num(cJSON_GetArrayItem(d, 0), "numa", -1), 0);
	T_ASSERT(!HAS(cJSON_GetArrayItem(d, 1), "numa"));
	T_ASSERT(!HAS(cJSON_GetArrayItem(d, 2), "numa"));
	T_EQ(NUM(f, "pci_numa.numa_unknown"), 2);
	cJSON_Delete(f);
	f = one("numa", 0, "node0 0-47,96-143\nnode1 48-95,144-191\nnodex 1\n");
	T_EQ(NUM(f, "numa.nodes"), 2);
	T_STREQ(hp_json_str(f, "numa.cpus.node1"), "48-95,144-191");
	cJSON_Delete(f);
	f = one("numa", 2, "");
	T_ASSERT(!HAS(f, "numa"));
	cJSON_Delete(f);
}

/* ---- EFA, plugin, libfabric, NCCL ---- */

static void t_efa_installer(void)
{
	cJSON *f = one_file("efa_installer", 0, "efa-installed-packages.txt");

	T_ASSERT(hp_json_bool(f, "efa_installer.found", 0));
	T_STREQ(hp_json_str(f, "efa_installer.version"), "1.34.0");
	T_ASSERT(!hp_json_bool(f, "efa_installer.debug", 1));
	T_EQ(NUM(f, "efa_installer.packages"), 15);
	T_STREQ(hp_json_str(f, "efa_installer.libfabric"), "1.22.0");
	cJSON_Delete(f);
	f = one("efa_installer", 1,
		"head: cannot open '/opt/amazon/efa_installed_packages' for reading: No such file "
		"or directory\n");
	T_ASSERT(!hp_json_bool(f, "efa_installer.found", 1));
	cJSON_Delete(f);
	f = one("efa_installer", 1,
		"head: cannot open '/opt/amazon/efa_installed_packages' for reading: Permission denied\n");
	T_ASSERT(!HAS(f, "efa_installer.found"));
	T_CONTAINS(hp_json_str(f, "efa_installer.error"), "Permission denied");
	cJSON_Delete(f);
}

static void t_ofi_plugin(void)
{
	cJSON *f = one("ofi_plugin", 0,
		       "link /opt/amazon/ofi-nccl/lib/libnccl-net.so -> libnccl-net-ofi.so\n"
		       "lib /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n");

	T_ASSERT(hp_json_bool(f, "ofi_plugin.found", 0));
	T_STREQ(str_at(hp_json_arr(f, "ofi_plugin.libs"), 0),
		"/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(f, "ofi_plugin.links"), 0), "target"),
		"libnccl-net-ofi.so");
	cJSON_Delete(f);
	f = one("ofi_plugin", 3, "");
	T_ASSERT(!hp_json_bool(f, "ofi_plugin.found", 1));
	cJSON_Delete(f);
	f = one("ofi_plugin", -1, "lib /opt/x\n");
	T_ASSERT(!HAS(f, "ofi_plugin"));
	cJSON_Delete(f);
}

static void t_libfabric(void)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);
	cJSON *f;

	block_file(&b, "libfabric", 0, "fi-info-version.txt");
	block_file(&b, "fi_tcp", 0, "fi-info-tcp.txt");
	f = parse(&b, 1);
	T_STREQ(hp_json_str(f, "libfabric.version"), "1.22.0");
	T_STREQ(hp_json_str(f, "libfabric.api"), "1.22");
	T_ASSERT(hp_json_bool(f, "libfabric.amazon", 0));
	T_EQ(NUM(f, "fi_tcp.providers"), 2);
	cJSON_Delete(f);
	f = one("fi_tcp", 1, "fi_getinfo: -61 (No data available)\n");
	T_EQ(NUM(f, "fi_tcp.providers"), 0);
	cJSON_Delete(f);
	f = one("fi_tcp", 124, "");
	T_ASSERT(!HAS(f, "fi_tcp.providers"));
	cJSON_Delete(f);
	f = one("libfabric", 1, "fi_info: error while loading shared libraries: libfabric.so.1\n");
	T_ASSERT(!HAS(f, "libfabric.version"));
	T_CONTAINS(hp_json_str(f, "libfabric.error"), "libfabric.so.1");
	cJSON_Delete(f);
}

static void t_nccl_lib(void)
{
	cJSON *f = one("nccl_lib", 0, "lib /usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5\n");

	/* Without the version string, the file name's version. */
	T_STREQ(hp_json_str(f, "nccl_lib.version"), "2.21.5");
	T_ASSERT(!HAS(f, "nccl_lib.cuda"));
	cJSON_Delete(f);
	f = one("nccl_lib", 0, "lib /usr/lib64/libnccl.so.2\n");
	T_ASSERT(!HAS(f, "nccl_lib.version"));
	cJSON_Delete(f);
	f = one("nccl_lib", 3, "");
	T_ASSERT(!hp_json_bool(f, "nccl_lib.found", 1));
	cJSON_Delete(f);
	f = one("nccl_header", 0,
		"file /usr/include/nccl.h\n#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n"
		"#define NCCL_PATCH 5\n#define NCCL_SUFFIX \"a1\"\n");
	T_STREQ(hp_json_str(f, "nccl_header.version"), "2.21.5a1");
	cJSON_Delete(f);
	f = one("nccl_header", 0, "file /usr/include/nccl.h\n#define NCCL_MAJOR 2\n");
	T_ASSERT(!HAS(f, "nccl_header.version"));
	cJSON_Delete(f);
}

static void t_netif(void)
{
	cJSON *f = one("netif", 0, "eth0 9001 up device\ndocker0 1500 down virtual\nens6 ? ? device\n");
	const cJSON *l = hp_json_arr(f, "netif.interfaces");

	T_EQ(cJSON_GetArraySize(l), 3);
	T_EQ(hp_json_num(cJSON_GetArrayItem(l, 0), "mtu", 0), 9001);
	T_ASSERT(hp_json_bool(cJSON_GetArrayItem(l, 1), "virtual", 0));
	/* Unreadable: absent, never 0 or 1500. */
	T_ASSERT(!HAS(cJSON_GetArrayItem(l, 2), "mtu"));
	T_ASSERT(!HAS(cJSON_GetArrayItem(l, 2), "state"));
	cJSON_Delete(f);
}

/* ---- limits, processes ---- */

static void t_limits(void)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);
	cJSON *f;
	const cJSON *e;

	block(&b, "limits", 0,
	      "Max stack size            8388608              unlimited            bytes     \n"
	      "Max open files            1024                 1048576              files     \n"
	      "Max locked memory         65536                65536                bytes     \n");
	block(&b, "limits_conf", 0,
	      "/etc/security/limits.d/01_efa.conf: *            soft   memlock         unlimited\n"
	      "/etc/security/limits.d/01_efa.conf: *            hard   memlock         unlimited\n"
	      "/etc/security/limits.conf: @train - stack -1\n"
	      "/etc/security/limits.conf: * soft memlock 8388608\n"
	      "not a limits line\n");
	f = parse(&b, 1);
	T_ASSERT(hp_json_bool(f, "limits.read", 0));
	T_EQ(NUM(f, "limits.memlock_soft"), 65536);
	T_EQ(NUM(f, "limits.memlock_hard"), 65536);
	T_EQ(NUM(f, "limits.stack_soft"), 8388608);
	T_STREQ(hp_json_str(f, "limits.stack_hard"), "unlimited");
	T_EQ(NUM(f, "limits.nofile_hard"), 1048576);
	e = hp_json_arr(f, "limits_conf.entries");
	T_EQ(cJSON_GetArraySize(e), 4);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(e, 0), "file"), "/etc/security/limits.d/01_efa.conf");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(e, 0), "value"), "unlimited");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(e, 2), "value"), "unlimited");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(e, 2), "type"), "-");
	T_EQ(hp_json_num(cJSON_GetArrayItem(e, 3), "value", 0), 8388608);
	cJSON_Delete(f);
	/* Unreadable limits are unknown. */
	f = one("limits", 2, "grep: /proc/self/limits: No such file or directory\n");
	T_ASSERT(!hp_json_bool(f, "limits.read", 1));
	T_ASSERT(!HAS(f, "limits.memlock_soft"));
	cJSON_Delete(f);
}

static void t_procs(void)
{
	cJSON *f = one("procs", 0,
		       "pid 4242 /opt/conda/bin/python3 /opt/conda/bin/torchrun --nproc-per-node 8 train.py \n"
		       "limit Max stack size            unlimited            unlimited            bytes     \n"
		       "limit Max locked memory         unlimited            unlimited            bytes     \n"
		       "env NCCL_DEBUG=INFO\n"
		       "env FI_PROVIDER=efa\n"
		       "pid 4300 python3 -u train.py --epochs 3\n"
		       "env RANK=3\n"
		       "env NCCL_P2P_DISABLE=1\n"
		       "pid 900 /usr/bin/python3 /usr/bin/networkd-dispatcher --run-startup-triggers\n"
		       "limit Max locked memory         65536                65536                bytes     \n"
		       "env broken\n"
		       "more\n");
	const cJSON *l = hp_json_arr(f, "procs.list"), *p;

	T_ASSERT(hp_json_bool(f, "procs.read", 0));
	T_EQ(NUM(f, "procs.count"), 3);
	T_EQ(NUM(f, "procs.training"), 2);
	T_ASSERT(hp_json_bool(f, "procs.more", 0));
	p = cJSON_GetArrayItem(l, 0);
	T_EQ(hp_json_num(p, "pid", 0), 4242);
	T_STREQ(hp_json_str(p, "cmd"), "/opt/conda/bin/python3 /opt/conda/bin/torchrun --nproc-per-node 8 train.py");
	T_ASSERT(hp_json_bool(p, "training", 0));
	T_STREQ(hp_json_str(p, "memlock_soft"), "unlimited");
	T_STREQ(hp_json_str(p, "stack_soft"), "unlimited");
	T_STREQ(hp_json_str(hp_json_get(p, "env"), "NCCL_DEBUG"), "INFO");
	p = cJSON_GetArrayItem(l, 1);
	/* Launched by python alone, but its environment says it is a rank. */
	T_ASSERT(hp_json_bool(p, "training", 0));
	T_STREQ(hp_json_str(hp_json_get(p, "env"), "NCCL_P2P_DISABLE"), "1");
	T_ASSERT(!HAS(p, "memlock_soft"));
	p = cJSON_GetArrayItem(l, 2);
	T_ASSERT(!hp_json_bool(p, "training", 1));
	T_EQ(hp_json_num(p, "memlock_soft", 0), 65536);
	T_ASSERT(!HAS(p, "env"));
	cJSON_Delete(f);
	f = one("procs", 0, "procs none\n");
	T_EQ(NUM(f, "procs.count"), 0);
	T_ASSERT(!hp_json_bool(f, "procs.more", 1));
	cJSON_Delete(f);
	f = one("procs", -1, "pid 1 python\n");
	T_ASSERT(!hp_json_bool(f, "procs.read", 1));
	T_ASSERT(!HAS(f, "procs.count"));
	cJSON_Delete(f);
}

/* ---- memory, IPC, shared memory ---- */

static void t_hugepages(void)
{
	cJSON *f = one("hugepages", 0, "1048576 0 0\n2048 1024 12\n64 ? ?\n");

	T_EQ(NUM(f, "hugepages.sizes.2048.total"), 1024);
	T_EQ(NUM(f, "hugepages.sizes.2048.free"), 12);
	T_EQ(NUM(f, "hugepages.sizes.1048576.total"), 0);
	T_ASSERT(!HAS(f, "hugepages.sizes.64.total"));
	cJSON_Delete(f);
}

static void t_logind(void)
{
	cJSON *f = one("logind", 0,
		       "/etc/systemd/logind.conf: RemoveIPC=yes\n"
		       "/etc/systemd/logind.conf.d/90-hpc.conf: RemoveIPC=no\n"
		       "/usr/lib/systemd/logind.conf.d/10-vendor.conf: RemoveIPC=yes\n"
		       "/etc/systemd/logind.conf.d/95-bad.conf: RemoveIPC=perhaps\n"
		       "files 4\n");

	/* 90-hpc sorts after 10-vendor: its "no" wins; the invalid value is ignored. */
	T_ASSERT(!hp_json_bool(f, "logind.remove_ipc", 1));
	T_STREQ(hp_json_str(f, "logind.source"), "/etc/systemd/logind.conf.d/90-hpc.conf");
	T_EQ(NUM(f, "logind.files"), 4);
	T_EQ(hp_json_len(f, "logind.lines"), 4);
	cJSON_Delete(f);
	f = one("logind", 0, "/usr/lib/systemd/logind.conf: RemoveIPC=yes\n"
			     "/etc/systemd/logind.conf:   RemoveIPC = No  # keep\nfiles 2\n");
	T_ASSERT(!hp_json_bool(f, "logind.remove_ipc", 1));
	T_STREQ(hp_json_str(f, "logind.source"), "/etc/systemd/logind.conf");
	cJSON_Delete(f);
	/* A logind.conf that sets nothing: systemd's default, yes. */
	f = one("logind", 0, "files 1\n");
	T_ASSERT(hp_json_bool(f, "logind.remove_ipc", 0));
	T_STREQ(hp_json_str(f, "logind.source"), "default");
	cJSON_Delete(f);
	/* No logind.conf at all: logind may not exist; unknown. */
	f = one("logind", 0, "files 0\n");
	T_ASSERT(!HAS(f, "logind.remove_ipc"));
	T_EQ(NUM(f, "logind.files"), 0);
	cJSON_Delete(f);
	f = one("logind", -1, "files 0\n");
	T_ASSERT(!HAS(f, "logind"));
	cJSON_Delete(f);
}

static void t_shm(void)
{
	cJSON *f = one("shm", 0, "file nccl-AbC123\nfile nccl-x\nfile nccl-y\ncount 3\n");

	T_EQ(NUM(f, "shm.nccl_segments"), 3);
	T_STREQ(str_at(hp_json_arr(f, "shm.names"), 0), "nccl-AbC123");
	T_ASSERT(hp_json_bool(f, "shm.read", 0));
	cJSON_Delete(f);
	f = one("shm", 2, "");
	T_ASSERT(!hp_json_bool(f, "shm.read", 1));
	T_ASSERT(!HAS(f, "shm.nccl_segments"));
	cJSON_Delete(f);
	/* A listing cut before its count is incomplete. */
	f = one("shm", 0, "file nccl-a\n");
	T_ASSERT(!hp_json_bool(f, "shm.read", 1));
	T_ASSERT(!HAS(f, "shm.nccl_segments"));
	cJSON_Delete(f);
}

/* ---- firewall, environment ---- */

static void t_firewall(void)
{
	cJSON *f = one_file("firewall", 0, "iptables-save-eks.txt");

	T_STREQ(hp_json_str(f, "firewall.tool"), "iptables");
	T_ASSERT(hp_json_bool(f, "firewall.readable", 0));
	T_EQ(NUM(f, "firewall.blocking"), 1);
	T_EQ(NUM(f, "firewall.cni_blocking"), 3);
	T_EQ(NUM(f, "firewall.rules"), 10);
	T_EQ(NUM(f, "firewall.blocking_policies"), 0);
	T_STREQ(hp_json_str(hp_json_get(f, "firewall.policies"), "filter/INPUT"), "ACCEPT");
	T_CONTAINS(str_at(hp_json_arr(f, "firewall.blocking_rules"), 0),
		   "filter: -A INPUT -p tcp -m tcp --dport 29500 -j REJECT");
	cJSON_Delete(f);
	f = one_file("firewall", 1, "iptables-save-notroot.txt");
	T_ASSERT(!hp_json_bool(f, "firewall.readable", 1));
	T_ASSERT(!HAS(f, "firewall.blocking"));
	T_CONTAINS(hp_json_str(f, "firewall.error"), "you must be root");
	cJSON_Delete(f);
	f = one_file("firewall_nft", 0, "nft-ruleset.txt");
	T_STREQ(hp_json_str(f, "firewall.tool"), "nft");
	T_EQ(NUM(f, "firewall.blocking"), 1);
	T_EQ(NUM(f, "firewall.blocking_policies"), 1);
	T_STREQ(hp_json_str(hp_json_get(f, "firewall.policies"), "inet filter/input"), "drop");
	T_CONTAINS(str_at(hp_json_arr(f, "firewall.blocking_rules"), 0), "tcp dport 28028 reject");
	cJSON_Delete(f);
	/* An empty rule set: readable, nothing blocks. */
	f = one("firewall", 0, "");
	T_ASSERT(hp_json_bool(f, "firewall.readable", 0));
	T_EQ(NUM(f, "firewall.blocking"), 0);
	cJSON_Delete(f);
	f = one("firewall", 127, "");
	T_ASSERT(!hp_json_bool(f, "firewall.present", 1));
	T_ASSERT(!HAS(f, "firewall.readable"));
	cJSON_Delete(f);
}

static void t_environment(void)
{
	cJSON *f = one("environment", 0,
		       "NCCL_DEBUG=WARN\nexport NCCL_SOCKET_IFNAME=\"^lo,docker\"\n"
		       "  TORCH_NCCL_ASYNC_ERROR_HANDLING='1'  \n=novalue\n");

	T_STREQ(hp_json_str(hp_json_get(f, "environment"), "NCCL_DEBUG"), "WARN");
	T_STREQ(hp_json_str(hp_json_get(f, "environment"), "NCCL_SOCKET_IFNAME"), "^lo,docker");
	T_STREQ(hp_json_str(hp_json_get(f, "environment"), "TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
	T_EQ(cJSON_GetArraySize(hp_json_get(f, "environment")), 3);
	cJSON_Delete(f);
	/* /etc/environment unreadable: unknown, not empty. */
	f = one("environment", 2, "grep: /etc/environment: No such file or directory\n");
	T_ASSERT(!HAS(f, "environment"));
	cJSON_Delete(f);
}

/* ---- framing ---- */

static void t_framing_hostile(void)
{
	static const char text[] =
		"login banner\r\n"
		"@@HP@@ BEGIN netif\r\n"
		"\x1b[1meth0\x1b[0m 9001 up device\r\n"
		"eth\xff\xfe 1500 up device @@HP@@ END netif 0\n"
		"@@HP@@ BEGIN shm\n"
		"file nccl-\x01zz\n"
		"@@HP@@ END other 0\n"
		"count 1\n"
		"@@HP@@ END shm 999\n"
		"@@HP@@ BEGIN BAD-NAME\n"
		"@@HP@@ BEGIN numa\n"
		"node0 0-3\n";
	cJSON *f = hp_nccl_probe_parse(text, sizeof(text) - 1);
	const cJSON *l = hp_json_arr(f, "netif.interfaces");
	char *json;

	T_ASSERT(hp_json_bool(f, "probe.truncated", 0));
	T_EQ(cJSON_GetArraySize(l), 2);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(l, 0), "name"), "eth0");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(l, 1), "name"), "eth??");
	/* END of another block is noise; an rc above 255 is no rc. */
	T_ASSERT(cJSON_IsNull(hp_json_get(f, "probe.blocks.shm.rc")));
	T_ASSERT(!HAS(f, "shm.nccl_segments"));
	/* A block that never ended is kept with rc unknown. */
	T_ASSERT(cJSON_IsNull(hp_json_get(f, "probe.blocks.numa.rc")));
	T_ASSERT(!HAS(f, "probe.blocks.BAD-NAME"));
	json = cJSON_PrintUnformatted(f);
	T_NOT_CONTAINS(json, "\x1b");
	T_NOT_CONTAINS(json, "\\u0001");
	free(json);
	cJSON_Delete(f);
	/* Nothing at all, and NULL. */
	f = hp_nccl_probe_parse("", 0);
	T_ASSERT(hp_json_bool(f, "probe.truncated", 0));
	T_EQ(hp_json_len(f, "probe.blocks"), 0);
	cJSON_Delete(f);
	f = hp_nccl_probe_parse(NULL, 10);
	T_ASSERT(cJSON_IsObject(f));
	cJSON_Delete(f);
}

/* ---- the script and its command ---- */

static int b64val(char c)
{
	const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = strchr(abc, c);

	return c && p ? (int)(p - abc) : -1;
}

static void t_script_and_command(void)
{
	static const char *const blocks[] = {
		"nccl", "topo", "pci_numa", "acs", "iommu", "peermem", "efa_installer", "ofi_plugin",
		"libfabric", "fi_tcp", "nccl_lib", "nccl_header", "netif", "limits", "limits_conf",
		"procs", "hugepages", "logind", "shm", "numa", "firewall", "firewall_nft",
		"environment",
	};
	const char *s = hp_nccl_probe_script();
	struct hp_buf cmd = HP_BUF_INIT(1 << 20), dec = HP_BUF_INIT(1 << 20);
	const char *p, *end;
	size_t i;
	unsigned v = 0;
	int bits = 0;

	T_ASSERT(hp_starts_with(s, "#!/bin/sh"));
	{
		/* The embedded copy is the file with frame.sh put in (tests run from the repository root). */
		char *file = t_probe_script("nccl-probe.sh");

		T_STREQ(file, s);
		T_CONTAINS(s, "\nblock() {\n");
		T_NOT_CONTAINS(s, "\n#@include");
		free(file);
	}
	T_CONTAINS(s, "@@HP@@ DONE");
	for (i = 0; i < HP_ARRAY_LEN(blocks); i++) {
		char want[64];

		snprintf(want, sizeof(want), " %s ", blocks[i]);
		if (!strstr(s, want))
			T_FAILF("the probe has no block '%s'", blocks[i]);
	}
	/* It changes nothing: no redirection into a file, no rm, no kill, no write tools. */
	T_NOT_CONTAINS(s, "rm -");
	T_NOT_CONTAINS(s, " kill ");
	T_NOT_CONTAINS(s, "sysctl -w");
	T_NOT_CONTAINS(s, "setpci");
	T_NOT_CONTAINS(s, "iptables -");
	hp_nccl_probe_command(&cmd);
	T_ASSERT(hp_starts_with(cmd.buf, "sh -c 'printf %s "));
	end = strstr(cmd.buf, " | base64 -d | sh'");
	T_ASSERT(end != NULL);
	for (p = cmd.buf + strlen("sh -c 'printf %s "); p < end && *p != '='; p++) {
		int x = b64val(*p);

		T_ASSERT(x >= 0);
		v = v << 6 | (unsigned)x;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			hp_buf_putc(&dec, (char)(v >> bits & 0xff));
		}
	}
	T_STREQ(dec.buf, s);
	hp_buf_release(&cmd);
	hp_buf_release(&dec);
}

/* The --exec script's output (src/collect/nccl-exec.c): torch's two version forms, exact shm size. */
static void t_exec_output(void)
{
	static const char text[] =
		"\x1b[0m@@HP@@ BEGIN env\r\n"
		"NCCL_DEBUG=INFO\n"
		"FI_PROVIDER=efa\n"
		"NCCL_IB_TOKEN=x\n"
		"HOME=/root\n"
		"=empty\n"
		"@@HP@@ END env 0\n"
		"@@HP@@ BEGIN torch\n"
		"torch 2.1.0\n"
		"nccl 21805\n"
		"@@HP@@ END torch 0\n"
		"@@HP@@ BEGIN libnccl\n"
		"/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2\n"
		"/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.5\n"
		"@@HP@@ END libnccl 0\n"
		"@@HP@@ BEGIN shm\n"
		"shm              65536         0     65536       0% /dev/shm\n"
		"@@HP@@ END shm 0\n"
		"@@HP@@ DONE\n";
	cJSON *f = hp_nccl_exec_parse(text, sizeof(text) - 1);

	T_ASSERT(hp_json_bool(f, "done", 0));
	T_STREQ(hp_json_str(f, "env.NCCL_DEBUG"), "INFO");
	T_STREQ(hp_json_str(f, "env.FI_PROVIDER"), "efa");
	T_ASSERT(!hp_json_get(f, "env.NCCL_IB_TOKEN"));
	T_ASSERT(!hp_json_get(f, "env.HOME"));
	T_STREQ(hp_json_str(f, "torch"), "2.1.0");
	/* 21805: NCCL 2.18.5 in the code form of NCCL 2.9 and later. */
	T_STREQ(hp_json_str(f, "torch_nccl"), "2.18.5");
	T_EQ(hp_json_len(f, "libnccl"), 2);
	T_STREQ(hp_json_str(f, "libnccl_version"), "2.18.5");
	/* Seed bug A3: 64 MiB is 65536 KiB, never rounded up to a gigabyte. */
	T_EQ(hp_json_num(f, "shm_kb", 0), 65536);
	cJSON_Delete(f);

	{
		static const char cut[] = "@@HP@@ BEGIN torch\nnccl (2, 21, 5)\n@@HP@@ END torch 0\n"
					  "@@HP@@ BEGIN shm\nsh: df: not found\n@@HP@@ END shm 0\n";

		f = hp_nccl_exec_parse(cut, sizeof(cut) - 1);
	}
	T_STREQ(hp_json_str(f, "torch_nccl"), "2.21.5");
	T_STREQ(hp_json_str(f, "shm_error"), "sh: df: not found");
	T_ASSERT(!hp_json_bool(f, "done", 1));
	cJSON_Delete(f);
	f = hp_nccl_exec_parse(NULL, 0);
	T_ASSERT(cJSON_IsObject(f));
	cJSON_Delete(f);
}

T_MAIN(T(t_dev_machine_capture), T(t_exec_output), T(t_topo_h100_with_nics), T(t_topo_h100_lost_nvlink),
       T(t_topo_pcie_only), T(t_topo_failures), T(t_acs), T(t_iommu_and_peermem),
       T(t_pci_numa_and_numa), T(t_efa_installer), T(t_ofi_plugin), T(t_libfabric),
       T(t_nccl_lib), T(t_netif), T(t_limits), T(t_procs), T(t_hugepages), T(t_logind),
       T(t_shm), T(t_firewall), T(t_environment), T(t_framing_hostile),
       T(t_script_and_command))
