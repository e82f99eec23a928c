/* fnrun-warm: PID 1 of a warm function container, and the start of every call in it.
 *
 * fnrun builds this file with `cc -static` (orchestrator/runtimes/container/warm/helper.py) and
 * carries the binary into the container read-only, so it works in images with no shell and no
 * libc of their own (static Go binaries on distroless). Three modes:
 *
 *   fnrun-warm init TTL         PID 1: reaps orphans; exits once no other process has been seen
 *                               for TTL seconds (a container whose fnrun died goes quiet, then
 *                               ends), or on SIGTERM.
 *   fnrun-warm call NONCE -- ARGV...
 *                               one function call: kill every process left by the last call,
 *                               empty the writable places (/tmp, /dev/shm, /dev/mqueue, System V
 *                               IPC), check they are empty and no process is left, then run ARGV
 *                               with this exec's stdin, stdout, stderr and environment; when it
 *                               exits, kill whatever it left behind and exit with its status.
 *                               When the container cannot be made clean (or ARGV cannot start),
 *                               it prints "fnrun-warm NONCE: WHY" on stderr and exits 213 before
 *                               running anything: fnrun then discards the container. The nonce is
 *                               in this process's argv only, never the function's, so no function
 *                               can forge the line.
 *   fnrun-warm clear DIR        empty DIR (as root: /local's copy, which only root may change).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOT_CLEAN 213

static const char *nonce = "";

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "fnrun-warm %s: %s%s%s\n", nonce, what, detail ? ": " : "", detail ? detail : "");
    exit(NOT_CLEAN);
}

static void pause_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The pids in this pid namespace other than 1 and this process; *zombies counts those already dead. */
static int others(int *zombies) {
    DIR *proc = opendir("/proc");
    if (!proc) fail("cannot read /proc", strerror(errno));
    int count = 0;
    *zombies = 0;
    pid_t self = getpid();
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 1 || pid == self) continue;
        char path[64], stat[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue; /* gone meanwhile */
        ssize_t n = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (n <= 0) continue;
        stat[n] = '\0';
        char *paren = strrchr(stat, ')'); /* the name may hold anything; the state follows its last ')' */
        count++;
        if (paren && paren[1] == ' ' && paren[2] == 'Z') (*zombies)++;
    }
    closedir(proc);
    return count;
}

/* Kill every process but PID 1 and this one, and wait until they are gone (reaped). */
static void kill_others(void) {
    for (int tries = 0; tries < 400; tries++) { /* 400 x 5 ms: a loaded machine may take that long */
        int zombies;
        if (others(&zombies) == 0) return;
        kill(-1, SIGKILL); /* every process this user may signal, but PID 1 and the caller */
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
        pause_ms(5);
    }
    fail("a process of an earlier call survives", NULL);
}

/* Remove everything inside the directory open as `dirfd`, making entries writable first. */
static int empty_at(int dirfd, const char *where) {
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
            int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub < 0 || empty_at(sub, where) != 0) failed = 1;
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
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) return;
        fail("cannot open", path);
    }
    if (empty_at(fd, path) != 0) fail("cannot empty", path);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
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
    FILE *list = fopen(path, "r");
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

static void make_clean(void) {
    kill_others();
    empty("/tmp");
    empty("/dev/shm");
    empty("/dev/mqueue");
    remove_ipc("shm");
    remove_ipc("msg");
    remove_ipc("sem");
}

static int status_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

static int call(char **argv) {
    make_clean();
    /* Orphans of the function are reparented to this process, so they are waited for here. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) fail("cannot make a pipe", strerror(errno));
    pid_t child = fork();
    if (child < 0) fail("cannot fork", strerror(errno));
    if (child == 0) {
        close(ready[0]);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], argv);
        int err = errno;
        if (write(ready[1], &err, sizeof err) < 0) {}
        _exit(127);
    }
    close(ready[1]);
    int err = 0;
    ssize_t got = read(ready[0], &err, sizeof err); /* EOF: the exec succeeded (the pipe closed on exec) */
    close(ready[0]);
    if (got == (ssize_t)sizeof err) {
        waitpid(child, NULL, 0);
        fail("cannot start the function", strerror(err));
    }
    /* This process must not hold the function's streams open once the function is done. */
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) { dup2(null, 0); dup2(null, 1); dup2(null, 2); if (null > 2) close(null); }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    /* What the function left running goes now: its output ends with it, as in a cold container. */
    kill(-1, SIGKILL);
    while (1) {
        pid_t pid = waitpid(-1, NULL, 0);
        if (pid < 0 && errno != EINTR) break;
    }
    return status_code(status);
}

/* Waits on signals rather than polling: a dead child is reaped at once, so a call that checks
 * that no process is left never waits on a zombie. */
static int init(long ttl) {
    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGCHLD);
    sigaddset(&wanted, SIGTERM);
    sigaddset(&wanted, SIGINT);
    sigprocmask(SIG_BLOCK, &wanted, NULL);
    time_t quiet_since = time(NULL);
    struct timespec tick = {1, 0};
    while (1) {
        int sig = sigtimedwait(&wanted, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) return 0;
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
        int zombies;
        if (others(&zombies) > 0) quiet_since = time(NULL);
        else if (time(NULL) - quiet_since >= ttl) return 0;
    }
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "init") == 0) return init(atol(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "clear") == 0) {
        empty(argv[2]);
        return 0;
    }
    if (argc >= 5 && strcmp(argv[1], "call") == 0 && strcmp(argv[3], "--") == 0) {
        nonce = argv[2];
        return call(argv + 4);
    }
    fprintf(stderr, "usage: fnrun-warm init TTL | call NONCE -- ARGV... | clear DIR\n");
    return 2;
}
