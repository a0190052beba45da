//go:build !js

package ipc

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// volumeService serves one MNI-sized volume (91×109×91 at 2 mm, 902,629 voxels, 3.6 MB).
type volumeService struct {
	*scripted
	v *Volume
}

func (s *volumeService) Volume(ctx context.Context, id, name string) (*Volume, error) {
	return s.v, nil
}

func benchServer(b *testing.B, svc Service) *Server {
	dir, err := os.MkdirTemp("", "ipcbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	s, err := NewServer(svc, ServerOptions{Socket: filepath.Join(dir, "s", "helper.sock"), Web: "127.0.0.1:0",
		Handler: HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	b.Cleanup(func() { s.Close() })
	return s
}

func benchClients(s *Server) map[string]*Client {
	return map[string]*Client{"unix": NewUnixClient(s.SocketPath()), "web": NewWebClient(s.WebURL(), s.Token())}
}

func BenchmarkInfo(b *testing.B) {
	s := benchServer(b, newScripted())
	for name, c := range benchClients(s) {
		b.Run(name, func(b *testing.B) {
			defer c.Close()
			for b.Loop() {
				if _, err := c.Info(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVolumeMNI2mm(b *testing.B) {
	v := &Volume{Header: VolumeHeader{Name: "degree", Dims: [3]int{91, 109, 91}, Affine: [4][4]float64{{-2, 0, 0, 90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}}}}
	v.Data = make([]float32, v.Header.Voxels())
	for i := range v.Data {
		v.Data[i] = float32(i % 1000)
	}
	s := benchServer(b, &volumeService{scripted: newScripted(), v: v})
	for name, c := range benchClients(s) {
		b.Run(name, func(b *testing.B) {
			defer c.Close()
			b.SetBytes(int64(4 * len(v.Data)))
			for b.Loop() {
				got, err := c.Volume(context.Background(), "j2", "degree")
				if err != nil || len(got.Data) != len(v.Data) {
					b.Fatal(err)
				}
			}
		})
	}
}
