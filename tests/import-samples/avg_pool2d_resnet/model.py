import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1):
        tmp_0 = torch.nn.functional.avg_pool2d(in_0, 2, 2, 0, True, False, None)
        tmp_1 = torch.nn.functional.avg_pool2d(in_0, kernel_size=3, stride=2, padding=1)
        tmp_2 = torch.nn.functional.avg_pool2d(in_0, (3, 2), stride=(1, 2), padding=(1, 0), ceil_mode=True, count_include_pad=False)
        tmp_3 = torch._C._nn.avg_pool2d(in_1, [2, 2], [], 1, True, True, 3)
        tmp_4 = torch.nn.functional.avg_pool2d(in_1, 3, stride=None)
        return (tmp_0, tmp_1, tmp_2, tmp_3, tmp_4)
