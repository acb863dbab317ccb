#ifndef WI_PNG_H
#define WI_PNG_H
// png helpers owned by the png coder (see CCodecShims.h).
#endif
