/* libFuzzer harness for llhttp, the HTTP/1.x parser vendored in the httptools sdist.
 * Parses the input as a request or response stream, with every callback installed,
 * then (when it stopped on an upgrade or pause) resumes the rest. */
#include <stddef.h>
#include <stdint.h>

#include "llhttp.h"

static int on_data(llhttp_t *p, const char *at, size_t length) {
    (void)p;
    volatile char sink = 0;
    if (length) sink = at[0] ^ at[length - 1]; /* touch both ends, as a user callback would */
    (void)sink;
    return 0;
}

static int on_event(llhttp_t *p) {
    (void)p;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    llhttp_t parser;
    llhttp_settings_t settings;
    llhttp_settings_init(&settings);
    settings.on_message_begin = on_event;
    settings.on_url = on_data;
    settings.on_status = on_data;
    settings.on_method = on_data;
    settings.on_version = on_data;
    settings.on_header_field = on_data;
    settings.on_header_value = on_data;
    settings.on_chunk_extension_name = on_data;
    settings.on_chunk_extension_value = on_data;
    settings.on_headers_complete = on_event;
    settings.on_body = on_data;
    settings.on_message_complete = on_event;
    settings.on_chunk_header = on_event;
    settings.on_chunk_complete = on_event;
    llhttp_init(&parser, size && (data[0] & 1) ? HTTP_RESPONSE : HTTP_BOTH, &settings);
    if (size > 1 && data[1] == 'L') llhttp_set_lenient_headers(&parser, 1);
    llhttp_errno_t err = llhttp_execute(&parser, (const char *)data, size);
    if (err == HPE_PAUSED_UPGRADE || err == HPE_PAUSED) {
        llhttp_resume_after_upgrade(&parser);
        const char *pos = llhttp_get_error_pos(&parser);
        if (pos && pos >= (const char *)data && pos <= (const char *)data + size)
            llhttp_execute(&parser, pos, (size_t)((const char *)data + size - pos));
    }
    llhttp_finish(&parser);
    return 0;
}
