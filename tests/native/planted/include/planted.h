/* A header of the planted harness: changing it must change the build identity. */
#define PLANTED_SLOTS 4
#define PLANTED_HOG_MB 512
