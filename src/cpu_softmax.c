/* Placeholder until the CPU backends land (issue: foundation). */
#include "kernels/launchers.h"
sml_status sml_launch_cpu_naive(sml_handle *h, const sml_problem *p) { (void)h; (void)p; return SML_ERR_INTERNAL; }
sml_status sml_launch_cpu_online(sml_handle *h, const sml_problem *p) { (void)h; (void)p; return SML_ERR_INTERNAL; }
