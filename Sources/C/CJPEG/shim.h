// jpeglib.h expects these to be included first.
#include <stdio.h>
#include <stddef.h>
#include <jpeglib.h>
#include <jerror.h>
