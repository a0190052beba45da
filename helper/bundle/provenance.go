package bundle

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/hubscope/hubscope/helper/internal/owned"
	"github.com/hubscope/hubscope/ipc/schema"
)

// SHA256File returns the hex SHA-256 of a file's bytes, read as a stream (provenance.json's
// input checksum; `sha256sum FILE` prints the same digest).
func SHA256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("checksum: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Provenance is schema.Provenance (the bundle's file schemas live in package schema).
type Provenance = schema.Provenance

// Conversion is schema.Conversion (the bundle's file schemas live in package schema).
type Conversion = schema.Conversion

// InputChecks is schema.InputChecks (the bundle's file schemas live in package schema).
type InputChecks = schema.InputChecks

// HeaderWarning is schema.HeaderWarning (the bundle's file schemas live in package schema).
type HeaderWarning = schema.HeaderWarning

// Input is schema.Input (the bundle's file schemas live in package schema).
type Input = schema.Input

// StageTiming is schema.StageTiming (the bundle's file schemas live in package schema).
type StageTiming = schema.StageTiming

// DescribeInput returns the size and SHA-256 of an input file.
func DescribeInput(path string) (Input, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Input{}, fmt.Errorf("checksum: %w", err)
	}
	sum, err := SHA256File(path)
	if err != nil {
		return Input{}, err
	}
	return Input{Path: path, Bytes: fi.Size(), SHA256: sum}, nil
}

// Host is schema.Host (the bundle's file schemas live in package schema).
type Host = schema.Host

// ThisHost describes the running machine.
func ThisHost() Host {
	return Host{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUModel:  cpuModel("/proc/cpuinfo"),
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
}

// cpuModel reads the first "model name" (x86) or "Model"/"Hardware" (ARM) line of a Linux
// cpuinfo file; elsewhere the file does not exist and the model is unknown ("").
func cpuModel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var fallback string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name":
			return strings.TrimSpace(val)
		case "Model", "Hardware":
			if fallback == "" {
				fallback = strings.TrimSpace(val)
			}
		}
	}
	return fallback
}

// processAlive reports whether a process with this id runs on this host (owned.Alive).
func processAlive(pid int) bool { return owned.Alive(pid) }
