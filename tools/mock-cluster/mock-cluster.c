/*
 * A Kafka-protocol broker for tests and local runs: librdkafka's mock cluster behind a line
 * protocol on stdin/stdout.
 *
 *   mock-cluster [--brokers N] [--topic NAME:PARTITIONS]...
 *
 * Prints "BOOTSTRAP host:port[,host:port...]" once the cluster listens, then answers every stdin
 * line with exactly one stdout line, "OK" or "ERR <text>":
 *
 *   topic <name> <partitions>
 *   down <brokerId> | up <brokerId>
 *   rtt <brokerId> <ms>
 *   error <apiKey> <errcode> [<errcode>...]   (the next requests of that type fail, one per code)
 *   topic-error <topic> <errcode>
 *   leader <topic> <partition> <brokerId>
 *   coordinator <group|transaction> <key> <brokerId>
 *   quit
 *
 * apiKey is a number or a request name (Produce, Fetch, Metadata, JoinGroup, ...); errcode is a
 * number or a librdkafka error name (NOT_COORDINATOR, _TRANSPORT, ...). Broker ids start at 1;
 * -1 means all brokers where librdkafka allows it.
 *
 * The process exits, destroying the cluster, on stdin EOF, "quit", SIGTERM or SIGINT, so it ends
 * together with the process that started it.
 *
 * Build: gcc -O2 -Wall -o mock-cluster mock-cluster.c -lrdkafka
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#define MAX_TOKENS 64
#define LINE_MAX_LEN 4096

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

/* librdkafka logs from its own threads; only errors are worth a line on stderr. */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf) {
    (void)rk;
    if (level <= LOG_ERR)
        fprintf(stderr, "mock-cluster: %s: %s\n", fac, buf);
}

static int parse_int(const char *s, long min, long max, long *out) {
    char *end;
    long v;
    if (!s || !*s)
        return 0;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return 0;
    *out = v;
    return 1;
}

static const struct {
    const char *name;
    int key;
} api_keys[] = {
    {"Produce", 0},     {"Fetch", 1},        {"ListOffsets", 2},      {"Metadata", 3},
    {"OffsetCommit", 8}, {"OffsetFetch", 9}, {"FindCoordinator", 10}, {"JoinGroup", 11},
    {"Heartbeat", 12},  {"LeaveGroup", 13},  {"SyncGroup", 14},       {"ApiVersions", 18},
    {"InitProducerId", 22}, {"AddPartitionsToTxn", 24}, {"EndTxn", 26},
};

static int parse_api_key(const char *s, int16_t *out) {
    long v;
    size_t i;
    if (parse_int(s, 0, SHRT_MAX, &v)) {
        *out = (int16_t)v;
        return 1;
    }
    for (i = 0; i < sizeof(api_keys) / sizeof(api_keys[0]); i++) {
        if (!strcasecmp(s, api_keys[i].name)) {
            *out = (int16_t)api_keys[i].key;
            return 1;
        }
    }
    return 0;
}

static int parse_err_code(const char *s, rd_kafka_resp_err_t *out) {
    const struct rd_kafka_err_desc *descs;
    size_t cnt, i;
    long v;
    if (parse_int(s, INT_MIN, INT_MAX, &v)) {
        *out = (rd_kafka_resp_err_t)v;
        return 1;
    }
    rd_kafka_get_err_descs(&descs, &cnt);
    for (i = 0; i < cnt; i++) {
        if (descs[i].name && !strcasecmp(s, descs[i].name)) {
            *out = descs[i].code;
            return 1;
        }
    }
    return 0;
}

/* Splits a line in place on blanks; returns the token count, or -1 when there are too many. */
static int tokenize(char *line, char **tok) {
    int n = 0;
    char *save = NULL, *t;
    for (t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (n == MAX_TOKENS)
            return -1;
        tok[n++] = t;
    }
    return n;
}

static int reply_err(const char *fmt, const char *arg) {
    printf("ERR ");
    printf(fmt, arg);
    printf("\n");
    return 0;
}

static int reply(rd_kafka_resp_err_t err) {
    if (err)
        return reply_err("%s", rd_kafka_err2str(err));
    printf("OK\n");
    return 0;
}

/* Runs one command line and writes its single reply line. Returns 1 on quit. */
static int run_command(rd_kafka_mock_cluster_t *mc, char *line) {
    char *tok[MAX_TOKENS];
    int n = tokenize(line, tok), i;
    long a, b;
    const char *cmd = n > 0 ? tok[0] : "";
    rd_kafka_resp_err_t errs[MAX_TOKENS];
    int16_t api_key;

    if (n < 0)
        return reply_err("%s", "too many arguments");
    if (n == 0)
        return reply_err("%s", "empty command");
    if (!strcmp(cmd, "quit")) {
        printf("OK\n");
        return 1;
    }
    if (!strcmp(cmd, "topic")) {
        if (n != 3 || !parse_int(tok[2], 1, 100000, &a))
            return reply_err("%s", "usage: topic <name> <partitions>");
        return reply(rd_kafka_mock_topic_create(mc, tok[1], (int)a, 1));
    }
    if (!strcmp(cmd, "down") || !strcmp(cmd, "up")) {
        if (n != 2 || !parse_int(tok[1], -1, INT_MAX, &a))
            return reply_err("usage: %s <brokerId>", cmd);
        return reply(!strcmp(cmd, "down") ? rd_kafka_mock_broker_set_down(mc, (int32_t)a)
                                          : rd_kafka_mock_broker_set_up(mc, (int32_t)a));
    }
    if (!strcmp(cmd, "rtt")) {
        if (n != 3 || !parse_int(tok[1], -1, INT_MAX, &a) || !parse_int(tok[2], 0, INT_MAX, &b))
            return reply_err("%s", "usage: rtt <brokerId> <ms>");
        return reply(rd_kafka_mock_broker_set_rtt(mc, (int32_t)a, (int)b));
    }
    if (!strcmp(cmd, "error")) {
        if (n < 3 || !parse_api_key(tok[1], &api_key))
            return reply_err("%s", "usage: error <apiKey> <errcode> [<errcode>...]");
        for (i = 2; i < n; i++)
            if (!parse_err_code(tok[i], &errs[i - 2]))
                return reply_err("unknown error code: %s", tok[i]);
        rd_kafka_mock_push_request_errors_array(mc, api_key, (size_t)(n - 2), errs);
        return reply(RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    if (!strcmp(cmd, "topic-error")) {
        if (n != 3 || !parse_err_code(tok[2], &errs[0]))
            return reply_err("%s", "usage: topic-error <topic> <errcode>");
        rd_kafka_mock_topic_set_error(mc, tok[1], errs[0]);
        return reply(RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    if (!strcmp(cmd, "leader")) {
        if (n != 4 || !parse_int(tok[2], 0, INT_MAX, &a) || !parse_int(tok[3], -1, INT_MAX, &b))
            return reply_err("%s", "usage: leader <topic> <partition> <brokerId>");
        return reply(rd_kafka_mock_partition_set_leader(mc, tok[1], (int32_t)a, (int32_t)b));
    }
    if (!strcmp(cmd, "coordinator")) {
        if (n != 4 || (strcmp(tok[1], "group") && strcmp(tok[1], "transaction")) ||
            !parse_int(tok[3], -1, INT_MAX, &a))
            return reply_err("%s", "usage: coordinator <group|transaction> <key> <brokerId>");
        return reply(rd_kafka_mock_coordinator_set(mc, tok[1], tok[2], (int32_t)a));
    }
    return reply_err("unknown command: %s", cmd);
}

/* Creates the --topic NAME:PARTITIONS topics; returns a process exit code. */
static int create_topics(rd_kafka_mock_cluster_t *mc, int argc, char **argv) {
    int i;
    for (i = 1; i < argc; i++) {
        /* A copy, so that ps keeps showing the arguments as given. */
        char spec[512], *colon;
        long partitions;
        rd_kafka_resp_err_t err;
        if (strcmp(argv[i], "--topic"))
            continue;
        snprintf(spec, sizeof(spec), "%s", argv[++i]);
        colon = strrchr(spec, ':');
        if (!colon || colon == spec || !parse_int(colon + 1, 1, 100000, &partitions)) {
            fprintf(stderr, "mock-cluster: --topic wants NAME:PARTITIONS, got \"%s\"\n", argv[i]);
            return 2;
        }
        *colon = '\0';
        err = rd_kafka_mock_topic_create(mc, spec, (int)partitions, 1);
        if (err) {
            fprintf(stderr, "mock-cluster: topic %s: %s\n", spec, rd_kafka_err2str(err));
            return 1;
        }
    }
    return 0;
}

/* Answers stdin lines until EOF, "quit" or a stop signal. stdin is read with read(2) rather than
 * stdio so that ppoll() sees exactly what is left, and a signal (unblocked only inside ppoll)
 * interrupts the wait. */
static void serve(rd_kafka_mock_cluster_t *mc, const sigset_t *wait_mask) {
    char line[LINE_MAX_LEN];
    size_t used = 0;
    int discarding = 0, quit = 0;

    while (!quit && !stop_requested) {
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        char *nl;
        ssize_t r;

        if (ppoll(&pfd, 1, NULL, wait_mask) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        r = read(STDIN_FILENO, line + used, sizeof(line) - 1 - used);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return; /* EOF: the parent closed our stdin, or died */
        used += (size_t)r;
        line[used] = '\0';

        while (!quit && (nl = memchr(line, '\n', used))) {
            size_t len = (size_t)(nl - line) + 1;
            *nl = '\0';
            if (discarding) {
                discarding = 0;
                printf("ERR line too long\n");
            } else {
                quit = run_command(mc, line);
            }
            fflush(stdout);
            memmove(line, line + len, used - len);
            used -= len;
            line[used] = '\0';
        }
        if (used == sizeof(line) - 1) {
            /* Drop an overlong line; its newline gets one ERR. */
            discarding = 1;
            used = 0;
        }
    }
}

int main(int argc, char **argv) {
    char errstr[512];
    rd_kafka_conf_t *conf;
    rd_kafka_t *rk;
    rd_kafka_mock_cluster_t *mc;
    long brokers = 1;
    int i, rc;
    sigset_t block, wait_mask;
    struct sigaction sa;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--brokers") && i + 1 < argc) {
            if (!parse_int(argv[++i], 1, 64, &brokers)) {
                fprintf(stderr, "mock-cluster: --brokers must be 1..64\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--topic") && i + 1 < argc) {
            i++; /* checked in create_topics() */
        } else {
            fprintf(stderr, "usage: mock-cluster [--brokers N] [--topic NAME:PARTITIONS]...\n");
            return 2;
        }
    }

    /* Block the stop signals before librdkafka starts its threads, so they inherit the mask and
     * only the ppoll() in serve() ever takes them. */
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &wait_mask);
    sigdelset(&wait_mask, SIGTERM);
    sigdelset(&wait_mask, SIGINT);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, on_log);
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (!rk) {
        fprintf(stderr, "mock-cluster: rd_kafka_new: %s\n", errstr);
        return 1;
    }
    mc = rd_kafka_mock_cluster_new(rk, (int)brokers);
    if (!mc) {
        fprintf(stderr, "mock-cluster: could not create the mock cluster\n");
        rd_kafka_destroy(rk);
        return 1;
    }

    rc = create_topics(mc, argc, argv);
    if (rc == 0) {
        printf("BOOTSTRAP %s\n", rd_kafka_mock_cluster_bootstraps(mc));
        fflush(stdout);
        serve(mc, &wait_mask);
    }

    /* If librdkafka ever hung on teardown, the alarm still ends the process. */
    alarm(5);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return rc;
}
