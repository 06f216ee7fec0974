/* edge_shapes.c: softmax-lab-edge-shapes, the edge-shape harness (src/edge/edge.h) as an
 * installed program, so that softmax_lab_add_gate runs it on plugin kernels. */
#include "edge/edge.h"

int main(int argc, char **argv) { return sml_edge_main("softmax-lab-edge-shapes", argc, argv); }
