/*
 * Private to src/collect/nccl*.c: the --exec part of the NCCL collector.
 */
#ifndef HP_COLLECT_NCCL_EXEC_H
#define HP_COLLECT_NCCL_EXEC_H

#include <cjson/cJSON.h>

#include "hp/kube.h"

/* The read-only script --exec runs in a container (sh -c). */
const char *hp_nccl_exec_script(void);

/* Run it in the planned pods of nccl.pods; the results into nccl.exec. */
void hp_nccl_exec_pods(struct hp_kube *k, cJSON *nccl);

#endif
