// measure: a command's wall time and peak memory, for scripts/bench (never a test).
//   measure OUT COMMAND [ARGS...]
// Runs COMMAND, and writes to OUT one line: "seconds peak_rss_kib peak_anon_kib".
//   seconds        wall time, CLOCK_MONOTONIC, from fork to the command's exit
//   peak_rss_kib   the largest resident set of any one process of the command (getrusage's
//                  ru_maxrss of the children, as GNU time's %M): mapped file pages included
//   peak_anon_kib  the largest sum of RssAnon (/proc/PID/status) over the command's process tree
//                  (the command, its children, theirs…), sampled every millisecond: anonymous
//                  memory only, a mapped file's pages not counted; a peak shorter than a
//                  millisecond can be missed
// Exits with the command's status.
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

static long anon_of(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *file = fopen(path, "r");
  if (!file) return 0;
  long kib = 0;
  while (fgets(line, sizeof line, file)) {
    if (strncmp(line, "RssAnon:", 8) == 0) {
      kib = strtol(line + 8, NULL, 10);
      break;
    }
  }
  fclose(file);
  return kib;
}

// The RssAnon of pid and every descendant (the children of each of its threads).
static long tree_anon(pid_t pid, int depth) {
  long total = anon_of(pid);
  if (depth > 16) return total;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *tasks = opendir(path);
  if (!tasks) return total;
  struct dirent *task;
  while ((task = readdir(tasks))) {
    if (task->d_name[0] == '.') continue;
    char children[320];
    snprintf(children, sizeof children, "/proc/%d/task/%s/children", (int)pid, task->d_name);
    FILE *file = fopen(children, "r");
    if (!file) continue;
    int child;
    while (fscanf(file, "%d", &child) == 1) total += tree_anon((pid_t)child, depth + 1);
    fclose(file);
  }
  closedir(tasks);
  return total;
}

static double now(void) {
  struct timespec time;
  clock_gettime(CLOCK_MONOTONIC, &time);
  return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: measure OUT COMMAND [ARGS...]\n");
    return 2;
  }
  double start = now();
  pid_t pid = fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    _exit(127);
  }
  long peak = 0;
  int status = 0;
  struct timespec tick = {0, 1000000};
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    long anon = tree_anon(pid, 0);
    if (anon > peak) peak = anon;
    nanosleep(&tick, NULL);
  }
  double seconds = now() - start;
  struct rusage usage;
  getrusage(RUSAGE_CHILDREN, &usage);
  FILE *out = fopen(argv[1], "w");
  if (!out) return 2;
  fprintf(out, "%.3f %ld %ld\n", seconds, usage.ru_maxrss, peak);
  fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
