package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildServer compiles the example server once into dir and returns the
// binary's path. race builds it with the race detector.
func buildServer(ctx context.Context, dir string, race bool) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build: the go command is not on PATH: %w", err)
	}
	out := filepath.Join(dir, "assay-server")
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/assaykit/assay/examples/server")
	cmd := exec.CommandContext(ctx, goBin, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./examples/server: %v\n%s", err, b)
	}
	return out, nil
}

// serverProc is one example-server process: started, killed with SIGKILL,
// restarted on the same data and port, and stopped with SIGTERM. Its stdout
// and stderr go to one log file that survives restarts.
type serverProc struct {
	name    string
	bin     string
	env     []string
	logPath string
	addr    string // host:port, fixed after the first start

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	starts  int
}

// serverEnv is the environment of a server: the caller's environment minus
// every ASSAY_*, OPENAI_* and STRIPE_* variable, plus the given ones.
func serverEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ASSAY_") || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "STRIPE_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// listeningLine finds host:port in the server's listening line (text or
// JSON log format).
var listeningLine = regexp.MustCompile(`assay listening on http://([^\s"]+)`)

// start launches the process and waits until it prints its listening line
// and answers /healthz.
func (s *serverProc) start(ctx context.Context, timeout time.Duration) error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return fmt.Errorf("%s: already running", s.name)
	}
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	cmd := exec.Command(s.bin)
	cmd.Env = append(append([]string{}, s.env...), "ASSAY_ADDR="+addr)
	cmd.Stdout = logf
	// The server logs on stderr; its first line, at every level, names the
	// address.
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logf.Close()
		s.mu.Unlock()
		return err
	}
	// The server dies with us, even when we are killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		s.mu.Unlock()
		return fmt.Errorf("%s: start: %w", s.name, err)
	}
	s.starts++
	fmt.Fprintf(logf, "--- loadtest: start #%d pid %d at %s\n", s.starts, cmd.Process.Pid, time.Now().UTC().Format(time.RFC3339Nano))
	s.cmd = cmd
	done := make(chan struct{})
	s.done = done
	s.mu.Unlock()

	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				select {
				case listening <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		err := cmd.Wait()
		s.mu.Lock()
		s.exitErr = err
		s.mu.Unlock()
		logf.Close()
		close(done)
	}()

	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-listening:
		s.mu.Lock()
		s.addr = a
		s.mu.Unlock()
	case <-done:
		s.reap()
		return fmt.Errorf("%s: exited before listening (%v); log %s:\n%s", s.name, s.exitError(), s.logPath, tail(s.logPath, 30))
	case <-t.C:
		_ = s.kill()
		return fmt.Errorf("%s: not listening after %s; log %s:\n%s", s.name, timeout, s.logPath, tail(s.logPath, 30))
	case <-ctx.Done():
		_ = s.kill()
		return ctx.Err()
	}
	for {
		if err := s.healthy(ctx); err == nil {
			return nil
		}
		select {
		case <-done:
			s.reap()
			return fmt.Errorf("%s: exited during start (%v); log %s:\n%s", s.name, s.exitError(), s.logPath, tail(s.logPath, 30))
		case <-t.C:
			_ = s.kill()
			return fmt.Errorf("%s: /healthz not 200 after %s", s.name, timeout)
		case <-ctx.Done():
			_ = s.kill()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// base returns the server's URL.
func (s *serverProc) base() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr
}

// pid returns the running process id, or 0.
func (s *serverProc) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *serverProc) exitError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitErr
}

// reap forgets a process that has exited.
func (s *serverProc) reap() {
	s.mu.Lock()
	s.cmd = nil
	s.mu.Unlock()
}

// alive reports whether the process is running.
func (s *serverProc) alive() bool {
	s.mu.Lock()
	done := s.done
	running := s.cmd != nil
	s.mu.Unlock()
	if !running {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// healthy checks GET /healthz.
func (s *serverProc) healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base()+"/healthz", nil)
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthz: %d", res.StatusCode)
	}
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *serverProc) kill() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	err := cmd.Process.Signal(syscall.SIGKILL)
	<-done
	s.reap()
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// stop sends SIGTERM and waits up to wait for a clean exit; it reports a
// non-zero exit status or a timeout (after which the process is killed).
func (s *serverProc) stop(wait time.Duration) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(wait):
		_ = s.kill()
		return fmt.Errorf("%s: did not stop within %s of SIGTERM", s.name, wait)
	}
	s.reap()
	if err := s.exitError(); err != nil {
		return fmt.Errorf("%s: graceful stop: %v", s.name, err)
	}
	return nil
}

// rssBytes reads VmRSS of pid from /proc.
func rssBytes(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// tail returns the last n lines of a file (for error messages).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lifeName names the current process lifetime: "sqlite" for the first,
// "sqlite#2" after a restart.
func (s *serverProc) lifeName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.starts <= 1 {
		return s.name
	}
	return fmt.Sprintf("%s#%d", s.name, s.starts)
}
