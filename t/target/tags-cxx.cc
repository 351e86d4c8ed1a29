// Fixture of t/t0067-tags-stub.sh: heaptool::tag_scope (include/heaptool.h)
// in C++: under the scope "cxx", cxx_tagged makes 4 blocks of 256 bytes
// with new; cxx_untagged, after it, 1 of 128.  No link to the agent.
#include <cstdio>

#include "fixture.h"
#include "heaptool.h"

static char *volatile keep[8];

FX_NOINLINE static void
cxx_tagged()
{
	heaptool::tag_scope scope("cxx");

	for (int i = 0; i < 4; i++)
		keep[i] = new char[256]; // SITE cxx_tagged
}

FX_NOINLINE static void
cxx_untagged()
{
	keep[4] = new char[128]; // SITE cxx_untagged
}

int
main()
{
	cxx_tagged();
	cxx_untagged();
	std::printf("done\n");
	return 0;
}
