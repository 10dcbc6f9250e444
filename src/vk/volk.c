/* volk.c - volk (Debian libvulkan-volk-dev ships it as source) compiled once. */
#include <volk.c>
