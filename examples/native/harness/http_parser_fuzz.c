/* libFuzzer harness for http-parser (Node.js's older HTTP parser), vendored in the
 * httptools sdist: the stream parser and the URL parser httptools' parse_url uses. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "http_parser.h"

static int on_data(http_parser *p, const char *at, size_t length) {
    (void)p;
    volatile char sink = 0;
    if (length) sink = at[0] ^ at[length - 1];
    (void)sink;
    return 0;
}

static int on_event(http_parser *p) {
    (void)p;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    if (data[0] == '/' || data[0] == 'h') { /* URL parser, as httptools.parse_url */
        struct http_parser_url url;
        http_parser_url_init(&url);
        if (http_parser_parse_url((const char *)data, size, data[0] == 'h' && size > 1 && data[1] == 'C', &url) == 0) {
            volatile size_t total = 0;
            for (int f = 0; f < UF_MAX; f++)
                if (url.field_set & (1 << f)) total += url.field_data[f].off + url.field_data[f].len;
            (void)total;
        }
        return 0;
    }
    http_parser parser;
    http_parser_settings settings;
    memset(&settings, 0, sizeof settings);
    settings.on_message_begin = on_event;
    settings.on_url = on_data;
    settings.on_status = on_data;
    settings.on_header_field = on_data;
    settings.on_header_value = on_data;
    settings.on_headers_complete = on_event;
    settings.on_body = on_data;
    settings.on_message_complete = on_event;
    settings.on_chunk_header = on_event;
    settings.on_chunk_complete = on_event;
    http_parser_init(&parser, data[0] & 1 ? HTTP_RESPONSE : HTTP_BOTH);
    size_t done = http_parser_execute(&parser, &settings, (const char *)data, size);
    if (parser.upgrade && done < size) {
        volatile char rest = data[done];
        (void)rest;
    }
    http_parser_execute(&parser, &settings, NULL, 0); /* EOF */
    return 0;
}
