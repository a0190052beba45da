//go:build !race

package register

const raceBuild = false
