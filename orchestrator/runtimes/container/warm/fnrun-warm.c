/* fnrun-warm: PID 1 of a warm function container; it starts every call in it as a fresh process.
 *
 * fnrun builds this file with `cc -static` (orchestrator/runtimes/container/warm/helper.py) and
 * carries the binary into the container read-only, so it works in images with no shell and no
 * libc of their own (static Go binaries on distroless). Two modes:
 *
 *   fnrun-warm serve TTL   PID 1. Serves calls over its own stdin and stdout, which fnrun holds
 *                          through the container's attach stream, so a call costs a fork and an
 *                          exec here rather than an exec through the engine. Exits at the end of
 *                          its stdin (fnrun went away: the engine closes it) or after TTL seconds
 *                          without a call.
 *   fnrun-warm clear DIR   empty DIR (run as root through the engine's exec: /local's copy on a
 *                          remote engine, which only root may change).
 *
 * The protocol is framed both ways: a type byte, a big-endian 32-bit length, the payload.
 *   fnrun -> here   'S' start a call: u32 argc, u32 envc, u32 zygc, then argc + envc + zygc
 *                       NUL-terminated strings (the zygote's command, when zygc > 0: below)
 *                   'I' a piece of the call's stdin      'C' the call's stdin ends
 *   here -> fnrun   'O' a piece of the function's stdout 'E' a piece of its stderr
 *                   'X' it exited: u32 exit code (128 + signal when killed)
 *                   'N' the call could not run (a reason); this process then exits
 *                   'U' the call ran, but something it started survives it (a reason): its 'X'
 *                       follows, then this process exits (the call must not be run again)
 * Before every call the container is made as a cold one would be: every process of the last call
 * killed and reaped, /tmp, /dev/shm, /dev/mqueue and
 * System V IPC emptied, all checked. The function runs
 * with this process's working directory and environment plus the call's, default signal
 * handling, and only its three streams open. When it exits, whatever it left running is killed
 * and its output ends with it, as in a cold container. This process makes itself non-dumpable,
 * so a function running as the same user can neither trace it nor open its descriptors: no call
 * can reach fnrun's stream or leave anything behind for the next. Its frames are its own, so no
 * function can forge an exit or a refusal.
 *
 * A zygote (fnrun's Python SDK images: functions/sdk/zygote.py) is a process of the image started
 * once, with the interpreter and the SDK imported, that forks each call's process instead of a new
 * interpreter starting: the call's three streams go to it over a socket (fd 3 in the zygote), it
 * answers the child's pid ('P') and, once the child is reaped, its exit code ('X'), both as
 * 5-byte messages. It is started clean (no call's environment), is the one process the clean-up
 * spares, and is started again when it is gone, changed (below) or a call asks for another. It
 * never imports the function's own module, and refuses to serve when it holds anything a fork
 * would hand down that a cold process lacks (a descriptor, a shared mapping, a thread, a child);
 * what can be seen of it from here is checked too: before each call it must be alone with this
 * process, single-threaded, with no System V segment attached anywhere, else it is replaced. A
 * zombie of its own (a call's clone(CLONE_PARENT)), which only it could reap, replaces it too.
 *
 * A call runs as the same user as this process and the zygote, so it may change what they hand
 * down to the processes they fork (resource limits, nice value, CPU affinity, scheduling policy,
 * I/O priority) through calls no ptrace rule guards. Before every call both are checked against
 * what this process had before the first call: a changed zygote is replaced, a changed PID 1 makes
 * the container unfit ('N').
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOT_CLEAN 213
#define CHUNK 65536
#define MAX_START (1 << 20) /* argv and environment of one call */

static int serving = 0;
static pid_t zygote_pid = 0;  /* the running zygote, if any */
static int zygote_broken = 0;  /* it could not serve a call: every call starts its own process */
static int zygote_sock = -1;  /* this end of its socket */
static char *zygote_key = NULL;  /* its command, NUL-separated, to tell whether a call may use it */
static size_t zygote_key_size = 0;

/* Writes all of `data` to fd 1; fnrun gone means nothing is left to serve. */
static void write_all(const void *data, size_t size) {
    const char *at = data;
    while (size > 0) {
        ssize_t n = write(1, at, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            kill(-1, SIGKILL);
            _exit(0);
        }
        at += n;
        size -= (size_t)n;
    }
}

static void frame(char type, const void *data, uint32_t size) {
    unsigned char head[5] = {(unsigned char)type, size >> 24, size >> 16, size >> 8, size};
    write_all(head, sizeof head);
    if (size) write_all(data, size);
}

static void fail(const char *what, const char *detail) {
    char line[1024];
    int n = snprintf(line, sizeof line, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    if (serving) {
        frame('N', line, (uint32_t)n);
        kill(-1, SIGKILL);
    } else {
        fprintf(stderr, "fnrun-warm: %s\n", line);
    }
    exit(NOT_CLEAN);
}

/* What a process hands down to the processes it forks, and another process of the same user may
 * change through system calls that no ptrace rule guards: resource limits (prlimit), the nice
 * value, the CPUs it may run on, the scheduling policy, the I/O priority. */
struct handed_down {
    struct rlimit limits[RLIM_NLIMITS];
    int nice;
    cpu_set_t cpus;
    int policy;
    long io_priority;
};

static struct handed_down pristine; /* this process's, before any call ran */

static int read_handed_down(pid_t pid, struct handed_down *into) {
    memset(into, 0, sizeof *into);
    for (int resource = 0; resource < RLIM_NLIMITS; resource++)
        if (prlimit(pid, resource, NULL, &into->limits[resource]) != 0) return -1;
    errno = 0;
    into->nice = getpriority(PRIO_PROCESS, (id_t)pid);
    if (errno) return -1;
    if (sched_getaffinity(pid, sizeof into->cpus, &into->cpus) != 0) return -1;
    into->policy = (int)syscall(SYS_sched_getscheduler, (int)pid); /* musl's wrapper only says ENOSYS */
    into->io_priority = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, (int)pid);
    return into->policy < 0 || into->io_priority < 0 ? -1 : 0;
}

/* Whether process `pid` (0: this one) still hands down what this process did before any call. */
static int as_pristine(pid_t pid) {
    struct handed_down now;
    return read_handed_down(pid, &now) == 0 && memcmp(&now, &pristine, sizeof now) == 0;
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Process `pid`'s state letter and parent, from /proc/PID/stat (the name may hold anything, so the
 * fields are read after its last ')'); 0 when it is gone. */
static char state_of(long pid, long *parent) {
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return 0;
    text[n] = '\0';
    char *close_paren = strrchr(text, ')');
    char state = 0;
    if (!close_paren || sscanf(close_paren + 1, " %c %ld", &state, parent) != 2) return 0;
    return state;
}

/* The pids in this pid namespace other than 1, this process and the zygote; `signal` sends each
 * of them SIGKILL (one by one: kill(-1) would take the zygote too). `*orphaned` is set when one
 * is a zombie of the zygote's, which only the zygote could reap (a call's clone(CLONE_PARENT)). */
static int others(int signal, int *orphaned) {
    DIR *proc = opendir("/proc");
    if (!proc) fail("cannot read /proc", strerror(errno));
    int count = 0;
    pid_t self = getpid();
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 1 || pid == self || (zygote_pid > 0 && pid == zygote_pid)) continue;
        count++;
        long parent = 0;
        if (orphaned && zygote_pid > 0 && state_of(pid, &parent) == 'Z' && parent == zygote_pid) *orphaned = 1;
        if (signal) kill((pid_t)pid, SIGKILL);
    }
    closedir(proc);
    return count;
}

/* Reap what has ended, whatever exit signal it was made with (__WALL); forget the zygote if it
 * is among them. */
static void reap(void) {
    pid_t pid;
    while ((pid = waitpid(-1, NULL, WNOHANG | __WALL)) > 0)
        if (pid == zygote_pid) zygote_pid = 0;
}

static void stop_zygote(void);

/* Kill every process but this one (PID 1) and the zygote, and wait until they are gone; -1 when
 * one survives. A zombie of the zygote's goes with the zygote: its children become this
 * process's, reaped here, and the next call starts another zygote. */
static int kill_others(void) {
    for (int tries = 0; tries < 400; tries++) { /* 400 x 5 ms: a loaded machine may take that long */
        reap();
        int orphaned = 0;
        if (others(0, &orphaned) == 0) return 0;
        if (orphaned) stop_zygote();
        if (zygote_pid > 0) others(1, NULL);
        else kill(-1, SIGKILL); /* every process this user may signal, but PID 1 and the caller */
        pause_ms(tries ? 5 : 0);
    }
    return -1;
}

/* Remove everything inside the directory open as `dirfd`, making entries writable first. */
static int empty_at(int dirfd) {
    DIR *dir = fdopendir(dirfd);
    if (!dir) return -1;
    int failed = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
        struct stat info;
        if (fstatat(dirfd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) { failed = 1; continue; }
        if (S_ISDIR(info.st_mode)) {
            fchmodat(dirfd, name, 0700, 0); /* an owner may always change its own modes */
            int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || empty_at(sub) != 0) failed = 1;
            if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0) failed = 1;
        } else if (unlinkat(dirfd, name, 0) != 0) {
            failed = 1;
        }
    }
    closedir(dir);
    return failed ? -1 : 0;
}

/* Empty `path`, if it exists; fail when anything is left in it. */
static void empty(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return;
        fail("cannot open", path);
    }
    if (empty_at(fd) != 0) fail("cannot empty", path);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) fail("cannot reopen", path);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) fail("still not empty", path);
    closedir(dir);
}

/* Remove the System V IPC objects listed in /proc/sysvipc/KIND (id is the second column). */
static void remove_ipc(const char *kind) {
    char path[64];
    snprintf(path, sizeof path, "/proc/sysvipc/%s", kind);
    FILE *list = fopen(path, "re");
    if (!list) return; /* no System V IPC in this kernel: nothing can be left there */
    char line[512];
    int header = 1, left = 0;
    while (fgets(line, sizeof line, list)) {
        if (header) { header = 0; continue; }
        long key, id;
        if (sscanf(line, "%ld %ld", &key, &id) != 2) continue;
        int gone;
        if (strcmp(kind, "shm") == 0) gone = shmctl((int)id, IPC_RMID, NULL) == 0;
        else if (strcmp(kind, "msg") == 0) gone = msgctl((int)id, IPC_RMID, NULL) == 0;
        else gone = semctl((int)id, 0, IPC_RMID) == 0;
        if (!gone && errno != EINVAL && errno != EIDRM) left = 1;
    }
    fclose(list);
    if (left) fail("cannot remove a System V IPC object", kind);
}

/* How many System V shared memory segments are still attached somewhere (a removed segment stays,
 * with its data, as long as a process has it attached). */
static int attached_segments(void) {
    FILE *list = fopen("/proc/sysvipc/shm", "re");
    if (!list) return 0;
    char line[512];
    int header = 1, count = 0;
    while (fgets(line, sizeof line, list)) {
        if (header) { header = 0; continue; }
        long key, id, cpid, lpid;
        unsigned long size, attached;
        unsigned int mode;
        if (sscanf(line, "%ld %ld %o %lu %ld %ld %lu", &key, &id, &mode, &size, &cpid, &lpid, &attached) == 7 && attached > 0)
            count++;
    }
    fclose(list);
    return count;
}

/* The number of threads of process `pid` (0 when it cannot be read). */
static int threads_of(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *status = fopen(path, "re");
    if (!status) return 0;
    int threads = 0;
    while (fgets(line, sizeof line, status))
        if (sscanf(line, "Threads: %d", &threads) == 1) break;
    fclose(status);
    return threads;
}

static void make_clean(void) {
    if (kill_others() != 0) fail("a process of an earlier call survives", NULL);
    empty("/tmp");
    empty("/dev/shm");
    empty("/dev/mqueue");
    remove_ipc("shm");
    remove_ipc("msg");
    remove_ipc("sem");
    /* The zygote is the only process left: one more thread than its own, or a segment still
     * attached, would be handed down to the call it forks; it is replaced. */
    if (zygote_pid > 0 && (attached_segments() > 0 || threads_of(zygote_pid) != 1)) {
        stop_zygote();
        reap();
    }
    if (attached_segments() > 0) fail("a System V segment stays attached", NULL);
}

static uint32_t be32(const unsigned char *at) {
    return (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
}

/* fnrun's frames, read from fd 0 as they come: `fill` reads what is there, `next` hands out one
 * whole frame at a time. */
static unsigned char inbox[MAX_START + 5];
static size_t inbox_used = 0, inbox_taken = 0;

static int fill(void) {
    if (inbox_taken) {
        memmove(inbox, inbox + inbox_taken, inbox_used - inbox_taken);
        inbox_used -= inbox_taken;
        inbox_taken = 0;
    }
    if (inbox_used == sizeof inbox) fail("a frame from fnrun is too large", NULL);
    ssize_t n;
    do n = read(0, inbox + inbox_used, sizeof inbox - inbox_used); while (n < 0 && errno == EINTR);
    if (n <= 0) { /* fnrun is gone */
        kill(-1, SIGKILL);
        _exit(0);
    }
    inbox_used += (size_t)n;
    return 1;
}

static int next(char *type, unsigned char **payload, uint32_t *size) {
    size_t have = inbox_used - inbox_taken;
    if (have < 5) return 0;
    uint32_t length = be32(inbox + inbox_taken + 1);
    if (length > MAX_START) fail("a frame from fnrun is too large", NULL);
    if (have < 5 + (size_t)length) return 0;
    *type = (char)inbox[inbox_taken];
    *payload = inbox + inbox_taken + 5;
    *size = length;
    inbox_taken += 5 + length;
    return 1;
}

static int status_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

/* The strings of an 'S' frame, as a NULL-terminated vector (pointing into a copy of the frame). */
static char **strings(unsigned char *data, uint32_t size, uint32_t count, size_t *offset) {
    char **list = calloc(count + 1, sizeof *list);
    if (!list) fail("out of memory", NULL);
    for (uint32_t i = 0; i < count; i++) {
        char *start = (char *)data + *offset;
        char *end = memchr(start, '\0', size - *offset);
        if (!end) fail("a malformed call from fnrun", NULL);
        list[i] = start;
        *offset += (size_t)(end - start) + 1;
    }
    return list;
}

static void relay_output(int *fd, char type) {
    char buf[CHUNK];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n > 0) {
        frame(type, buf, (uint32_t)n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(*fd);
        *fd = -1;
    }
}

/* Relay what is left of the function's output and close it: all of it to its end (`to_end`), or
 * only what is there now. */
static void drain(int *fd, char type, int to_end) {
    if (*fd < 0) return;
    if (to_end) fcntl(*fd, F_SETFL, 0);
    while (*fd >= 0) {
        char buf[CHUNK];
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) {
            frame(type, buf, (uint32_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            close(*fd);
            *fd = -1;
        }
    }
}

static void stop_zygote(void) {
    if (zygote_sock >= 0) close(zygote_sock);
    zygote_sock = -1;
    if (zygote_pid > 0) {
        kill(zygote_pid, SIGKILL);
        waitpid(zygote_pid, NULL, 0);
    }
    zygote_pid = 0;
}

/* Start the zygote `argv` (its command also being `key`), clean: this process's environment,
 * default signal handling, /dev/null for stdin and stdout, this stderr, the socket as fd 3. */
static int start_zygote(char **argv, const char *key, size_t key_size) {
    stop_zygote();
    int pair[2], ready[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair)) return -1;
    int quiet_in[2], quiet_out[2];
    if (pipe2(ready, O_CLOEXEC)) { close(pair[0]); close(pair[1]); return -1; }
    if (pipe2(quiet_in, O_CLOEXEC) || pipe2(quiet_out, O_CLOEXEC)) fail("cannot make a pipe", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) { close(pair[0]); close(pair[1]); close(ready[0]); close(ready[1]); return -1; }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        /* stdin and stdout are pipes, as a call's are, so the interpreter sets its streams up the
         * same way; nothing is ever read or written on them */
        if (dup2(quiet_in[0], 0) < 0 || dup2(quiet_out[1], 1) < 0 || dup2(pair[1], 3) < 0) _exit(127);
        execvp(argv[0], argv);
        int why = errno;
        if (write(ready[1], &why, sizeof why) < 0) {}
        _exit(127);
    }
    close(pair[1]);
    close(ready[1]);
    close(quiet_in[0]); close(quiet_in[1]); close(quiet_out[0]); close(quiet_out[1]);
    int why = 0;
    ssize_t got = read(ready[0], &why, sizeof why);
    close(ready[0]);
    if (got == (ssize_t)sizeof why) {
        close(pair[0]);
        waitpid(pid, NULL, 0);
        return -1;
    }
    zygote_pid = pid;
    zygote_sock = pair[0];
    free(zygote_key);
    zygote_key = malloc(key_size);
    if (!zygote_key) fail("out of memory", NULL);
    memcpy(zygote_key, key, key_size);
    zygote_key_size = key_size;
    return 0;
}

/* Hand the call's streams and its argv and environment (`strings`, as in the 'S' frame: u32 argc,
 * u32 envc, the strings) to the zygote; the pid of the process it forked. */
static pid_t zygote_call(int fds[3], const unsigned char *strings, uint32_t size) {
    kill(zygote_pid, SIGCONT); /* an earlier call may have stopped it */
    unsigned char head[4] = {size >> 24, size >> 16, size >> 8, size};
    struct iovec part = {head, sizeof head};
    char control[CMSG_SPACE(3 * sizeof(int))];
    memset(control, 0, sizeof control);
    struct msghdr message = {0};
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    struct cmsghdr *rights = CMSG_FIRSTHDR(&message);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(3 * sizeof(int));
    memcpy(CMSG_DATA(rights), fds, 3 * sizeof(int));
    ssize_t sent;
    do sent = sendmsg(zygote_sock, &message, MSG_NOSIGNAL); while (sent < 0 && errno == EINTR);
    if (sent != (ssize_t)sizeof head) return -1;
    for (size_t at = 0; at < size;) {
        ssize_t n = send(zygote_sock, strings + at, size - at, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        at += (size_t)n;
    }
    unsigned char answer[5];
    for (size_t at = 0; at < sizeof answer;) {
        struct pollfd wait = {zygote_sock, POLLIN, 0};
        if (poll(&wait, 1, 30000) == 0) return -1; /* stopped or stuck: it cannot serve */
        ssize_t n = read(zygote_sock, answer + at, sizeof answer - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        at += (size_t)n;
    }
    return answer[0] == 'P' ? (pid_t)be32(answer + 1) : -1;
}

/* One call: clean up, start ARGV with the call's environment (itself, or through the zygote),
 * relay its streams, report its exit. */
static void call(unsigned char *start, uint32_t size, int signals) {
    if (size < 12) fail("a malformed call from fnrun", NULL);
    unsigned char *data = malloc(size);
    if (!data) fail("out of memory", NULL);
    memcpy(data, start, size); /* the inbox moves on while the call runs */
    uint32_t argc = be32(data), envc = be32(data + 4), zygc = be32(data + 8);
    size_t offset = 12;
    if (argc == 0 || argc > size || envc > size || zygc > size) fail("a malformed call from fnrun", NULL);
    char **argv = strings(data, size, argc, &offset);
    char **env = strings(data, size, envc, &offset);
    size_t zygote_at = offset;
    char **zygote = strings(data, size, zygc, &offset);
    /* a call may have changed what this process, or the zygote, hands down to the next call's */
    if (!as_pristine(0)) fail("an earlier call changed the limits or scheduling every call inherits", NULL);
    if (zygote_pid > 0 && !as_pristine(zygote_pid)) stop_zygote();
    make_clean();
    int through_zygote = zygc > 0 && !zygote_broken;
    if (through_zygote) {
        const char *key = (const char *)data + zygote_at;
        size_t key_size = offset - zygote_at;
        if (zygote_pid <= 0 || zygote_key_size != key_size || memcmp(zygote_key, key, key_size) != 0)
            through_zygote = start_zygote(zygote, key, key_size) == 0;
    }

    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
        fail("cannot make a pipe", strerror(errno));
    pid_t child = -1;
    if (through_zygote) {
        int streams[3] = {in[0], out[1], err[1]};
        /* the zygote's message is the 'S' payload without the zygote's own strings */
        memset(data + 8, 0, 4);
        child = zygote_call(streams, data, (uint32_t)zygote_at);
        if (child < 0) { /* it took no call: none of it ran; the call starts its own process */
            zygote_broken = 1;
            stop_zygote();
            if (kill_others() != 0) fail("a process of an earlier call survives", NULL);
            close(in[0]); close(in[1]); close(out[0]); close(out[1]); close(err[0]); close(err[1]);
            if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
                fail("cannot make a pipe", strerror(errno));
            through_zygote = 0;
        }
    }
    if (!through_zygote) {
        int ready[2];
        if (pipe2(ready, O_CLOEXEC)) fail("cannot make a pipe", strerror(errno));
        child = fork();
        if (child < 0) fail("cannot fork", strerror(errno));
        if (child == 0) {
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            signal(SIGPIPE, SIG_DFL);
            dup2(in[0], 0);
            dup2(out[1], 1);
            dup2(err[1], 2);
            for (uint32_t i = 0; i < envc; i++) putenv(env[i]);
            execvp(argv[0], argv);
            int why = errno;
            if (write(ready[1], &why, sizeof why) < 0) {}
            _exit(127);
        }
        close(ready[1]);
        int why = 0;
        ssize_t got = read(ready[0], &why, sizeof why); /* EOF: the exec succeeded (the pipe closed on exec) */
        close(ready[0]);
        if (got == (ssize_t)sizeof why) {
            waitpid(child, NULL, 0);
            fail("cannot start the function", strerror(why));
        }
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    free(argv);
    free(env);
    free(zygote);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);

    int to_child = in[1], from_out = out[0], from_err = err[0], exited = 0, status = 0, input_ended = 0;
    int from_zygote = through_zygote ? zygote_sock : -1;
    unsigned char *pending = NULL; /* a piece of stdin the function has not taken yet */
    uint32_t pending_size = 0;
    while (!exited) {
        char type;
        unsigned char *payload;
        uint32_t length;
        while (!pending_size && !input_ended && next(&type, &payload, &length)) {
            if (type == 'C') {
                input_ended = 1;
            } else if (type == 'I' && length && to_child >= 0) {
                pending = realloc(pending, length);
                if (!pending) fail("out of memory", NULL);
                memcpy(pending, payload, length);
                pending_size = length;
            }
        }
        if (input_ended && !pending_size && to_child >= 0) {
            close(to_child);
            to_child = -1;
        }
        struct pollfd fds[6];
        int n = 0, at_in = -1, at_child = -1, at_out = -1, at_err = -1, at_zygote = -1;
        if (!pending_size && !input_ended) { at_in = n; fds[n++] = (struct pollfd){0, POLLIN, 0}; }
        if (pending_size && to_child >= 0) { at_child = n; fds[n++] = (struct pollfd){to_child, POLLOUT, 0}; }
        if (from_out >= 0) { at_out = n; fds[n++] = (struct pollfd){from_out, POLLIN, 0}; }
        if (from_err >= 0) { at_err = n; fds[n++] = (struct pollfd){from_err, POLLIN, 0}; }
        if (from_zygote >= 0) { at_zygote = n; fds[n++] = (struct pollfd){from_zygote, POLLIN, 0}; }
        int at_sig = n;
        fds[n++] = (struct pollfd){signals, POLLIN, 0};
        if (poll(fds, (nfds_t)n, -1) < 0) {
            if (errno == EINTR) continue;
            fail("poll", strerror(errno));
        }
        if (at_in >= 0 && fds[at_in].revents) fill();
        if (at_child >= 0 && fds[at_child].revents) {
            ssize_t wrote = write(to_child, pending, pending_size);
            if (wrote > 0) {
                memmove(pending, pending + wrote, pending_size - (uint32_t)wrote);
                pending_size -= (uint32_t)wrote;
            } else if (wrote < 0 && errno != EAGAIN && errno != EINTR) { /* it closed its stdin */
                close(to_child);
                to_child = -1;
                pending_size = 0;
            }
        }
        if (at_out >= 0 && fds[at_out].revents) relay_output(&from_out, 'O');
        if (at_err >= 0 && fds[at_err].revents) relay_output(&from_err, 'E');
        if (at_zygote >= 0 && fds[at_zygote].revents) {
            unsigned char answer[5];
            ssize_t got;
            do got = read(from_zygote, answer, sizeof answer); while (got < 0 && errno == EINTR);
            if (got == (ssize_t)sizeof answer && answer[0] == 'X') {
                exited = 1;
                status = (int)be32(answer + 1) << 8; /* as waitpid's status: the code, not a signal */
            } else { /* the zygote is gone (a function killed it): the child is this process's now */
                close(zygote_sock);
                zygote_sock = from_zygote = -1;
            }
        }
        if (fds[at_sig].revents) {
            struct signalfd_siginfo info;
            while (read(signals, &info, sizeof info) > 0) {}
            pid_t pid;
            int any;
            while ((pid = waitpid(-1, &any, WNOHANG | __WALL)) > 0) {
                if (pid == zygote_pid) zygote_pid = 0;
                if (pid == child) { exited = 1; status = any; }
            }
        }
    }
    if (zygote_pid > 0 && zygote_sock < 0) stop_zygote(); /* it went quiet: start another next time */
    /* What the function left running goes now: its output ends with it, as in a cold container.
     * What will not go makes the container unfit, but the function has run: its output and exit
     * are reported as they are ('U' first), never taken for a call that could not start. */
    int survivors = kill_others();
    if (to_child >= 0) close(to_child);
    free(pending);
    drain(&from_out, 'O', survivors == 0); /* a survivor may hold them: then only what is there */
    drain(&from_err, 'E', survivors == 0);
    int code = status_code(status);
    unsigned char exit_frame[4] = {code >> 24, code >> 16, code >> 8, code};
    if (survivors != 0) {
        static const char why[] = "a process of the call survives";
        frame('U', why, sizeof why - 1);
        frame('X', exit_frame, 4);
        kill(-1, SIGKILL);
        exit(NOT_CLEAN);
    }
    frame('X', exit_frame, 4);
    free(data);
}

static int serve(long ttl) {
    serving = 1;
    prctl(PR_SET_DUMPABLE, 0); /* no function may trace this process or open its descriptors */
    if (read_handed_down(0, &pristine) != 0) fail("cannot read this process's limits", strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGCHLD);
    sigprocmask(SIG_BLOCK, &wanted, NULL);
    int signals = signalfd(-1, &wanted, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signals < 0) fail("cannot make a signalfd", strerror(errno));
    fcntl(0, F_SETFD, FD_CLOEXEC);
    fcntl(1, F_SETFD, FD_CLOEXEC);
    while (1) {
        char type;
        unsigned char *payload;
        uint32_t length;
        while (next(&type, &payload, &length)) {
            if (type == 'S') call(payload, length, signals);
            /* 'I' and 'C' between calls: the rest of the input of a function that did not read it */
        }
        struct pollfd fds[2] = {{0, POLLIN, 0}, {signals, POLLIN, 0}};
        int ready = poll(fds, 2, (int)(ttl * 1000));
        if (ready == 0) return 0; /* idle too long: fnrun is gone or has no more calls */
        if (ready < 0) continue;
        if (fds[1].revents) {
            struct signalfd_siginfo info;
            while (read(signals, &info, sizeof info) > 0) {}
            reap();
        }
        if (fds[0].revents) fill();
    }
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "serve") == 0) return serve(atol(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "clear") == 0) {
        empty(argv[2]);
        return 0;
    }
    fprintf(stderr, "usage: fnrun-warm serve TTL | clear DIR\n");
    return 2;
}
